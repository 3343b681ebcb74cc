"""Ask a model for JSON and read its reply defensively.

Models wrap JSON in prose or code fences, truncate it, or answer something else entirely (the offline
scripted model answers with a tool call). `extract_json` finds the first JSON object or array that
parses; `ask_json` returns None when there is none, and callers then learn nothing from that reply.
Provider errors are not caught here: they belong to the runner, which retries or stops the run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

import anyio

from simulators.model_api import ModelClient, ModelRequest
from simulators.protocol import JSON, Message

__all__ = ["MAX_OUTPUT_TOKENS", "ask_json", "as_int", "as_text", "extract_json", "gather", "items_of"]

T = TypeVar("T")
R = TypeVar("R")

MAX_OUTPUT_TOKENS = 4096
"""Room for a reasoning model's thinking plus a short JSON reply."""
_MAX_STARTS = 64
"""Candidate start characters tried before giving up: bounds the work on a long prose reply."""
_DECODER = json.JSONDecoder()
_ID = re.compile(r"\[?#?[a-z]{0,8}\s*(\d{1,9})\]?", re.IGNORECASE | re.ASCII)


def extract_json(text: str) -> JSON | None:
    """The first JSON object or array in `text` that parses, or None."""
    tried = 0
    for start, char in enumerate(text):
        if char not in "{[":
            continue
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            tried += 1
            if tried >= _MAX_STARTS:
                return None
            continue
        return value
    return None


async def ask_json(client: ModelClient, *, system: str, user: str, domain: str,
                   max_output_tokens: int = MAX_OUTPUT_TOKENS) -> JSON | None:
    """One method call (purpose "method", no tools); the parsed JSON of its reply text, or None."""
    request = ModelRequest(system=system, messages=(Message(role="user", content=user),),
                           max_output_tokens=max_output_tokens, purpose="method", domain=domain)
    response = await client.respond(request)
    return extract_json(response.turn.text)


async def gather(call: Callable[[T], Awaitable[R]], items: Sequence[T]) -> list[R]:
    """`call` on every item concurrently; results in the items' order, whatever order they finish in,
    so what a method learns from a block never depends on which reply came back first."""
    results: dict[int, R] = {}

    async def one(i: int) -> None:
        results[i] = await call(items[i])

    async with anyio.create_task_group() as group:
        for i in range(len(items)):
            group.start_soon(one, i)
    return [results[i] for i in range(len(items))]


def items_of(reply: JSON | None, key: str) -> list[Mapping[str, JSON]]:
    """The objects listed under `key` of a reply object, or of a bare array; others dropped."""
    value = reply.get(key) if isinstance(reply, dict) else reply
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def as_text(value: JSON, limit: int = 400) -> str:
    """A string field, whitespace-collapsed and cut to `limit`; anything else is empty."""
    if not isinstance(value, str):
        return ""
    return " ".join(value.split())[:limit]


def as_int(value: JSON) -> int | None:
    """An id given as 7, "7" or "r7" / "b7"; None when it is none of these."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        match = _ID.fullmatch(value.strip())
        if match:
            return int(match.group(1))
    return None

"""Prefix caching for the loopback mock provider, as the two dialects document it.

A request is read as an ordered list of blocks (Anthropic's cache order: each tool, each system block,
each message content block; OpenAI: each tool, then each message), each counted at one token per four
bytes of its JSON (its `cache_control` mark left out). A prefix is identified by the hash of its blocks.

Anthropic (explicit): a block carrying `cache_control` is a breakpoint, at most 4 per request (more is a
400, as the API answers). For each breakpoint the longest cached prefix ending at it or at one of the
20 block boundaries before it is read (`cache_read_input_tokens`); the part up to the last breakpoint
beyond what was read is written (`cache_creation_input_tokens`), and every breakpoint prefix of at
least the minimum cacheable length is stored. Prefixes shorter than that are never cached. A mark's
`ttl` is "5m" (the default) or "1h"; anything else, or a 1-hour mark after a 5-minute one (longer TTLs
must come first), is a 400. The written part up to the last 1-hour mark is a 1-hour write, the rest
a 5-minute write (`usage.cache_creation.ephemeral_1h_input_tokens` / `ephemeral_5m_input_tokens`).

OpenAI (automatic): every block boundary of at least 1024 tokens is stored; a later request reads the
longest stored prefix, counted in 128-token steps from 1024 (`usage.prompt_tokens_details.cached_tokens`).

Entries never expire here: the mock has no clock a test should depend on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["MAX_BREAKPOINTS", "Billed", "PrefixCache", "prompt_blocks"]

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
OPENAI_MIN_PREFIX = 1024
OPENAI_STEP = 128
BYTES_PER_TOKEN = 4


TTLS = ("5m", "1h")


@dataclass(frozen=True)
class Block:
    tokens: int
    digest: bytes
    """Hash of the prefix ending with this block."""
    breakpoint: bool
    ttl: str = ""
    """A breakpoint's TTL as sent ("5m" when its mark names none)."""


@dataclass(frozen=True)
class Billed:
    """What the mock billed one request: every prompt token is in `input_tokens`."""

    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int = 0
    """The part of the writes that went to the 1-hour cache."""


@dataclass
class PrefixCache:
    anthropic_min_prefix: int = 1024
    """Anthropic's minimum cacheable prompt length (1024 for Sonnet-class models; more for some)."""
    _stored: set[bytes] = field(default_factory=set)
    billed: list[Billed] = field(default_factory=list)

    def bill(self, body: Mapping[str, Any], *, anthropic: bool) -> Billed | str:
        """What this request's prompt is billed, remembering its prefixes; a str is a refusal (400)."""
        blocks = prompt_blocks(body, anthropic=anthropic)
        marks = sum(1 for b in blocks if b.breakpoint)
        if anthropic and marks > MAX_BREAKPOINTS:
            return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {marks}."
        refused = _ttl_refusal(blocks) if anthropic else None
        if refused:
            return refused
        billed = self._anthropic(blocks) if anthropic else self._openai(blocks)
        self.billed.append(billed)
        return billed

    def _anthropic(self, blocks: list[Block]) -> Billed:
        ends = _cumulative(blocks)
        marks = [i for i, b in enumerate(blocks) if b.breakpoint]
        read = 0
        for mark in marks:
            for j in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                if blocks[j].digest in self._stored:
                    read = max(read, ends[j])
                    break
        written = written_1h = 0
        for mark in marks:
            if ends[mark] >= self.anthropic_min_prefix:
                self._stored.add(blocks[mark].digest)
                written = max(written, ends[mark] - read)
                if blocks[mark].ttl == "1h":
                    written_1h = max(written_1h, ends[mark] - read)
        return Billed(ends[-1] if ends else 0, read, written, written_1h)

    def _openai(self, blocks: list[Block]) -> Billed:
        ends = _cumulative(blocks)
        hit = max((ends[i] for i, b in enumerate(blocks) if b.digest in self._stored), default=0)
        cached = 0 if hit < OPENAI_MIN_PREFIX else hit - (hit - OPENAI_MIN_PREFIX) % OPENAI_STEP
        self._stored.update(b.digest for b, end in zip(blocks, ends, strict=True) if end >= OPENAI_MIN_PREFIX)
        return Billed(ends[-1] if ends else 0, cached, 0)


def prompt_blocks(body: Mapping[str, Any], *, anthropic: bool) -> list[Block]:
    """The request's prompt in cache order, each block with the hash of the prefix it ends."""
    running = hashlib.sha256()
    blocks = []
    for piece in _pieces(body, anthropic):
        marked = isinstance(piece, dict) and "cache_control" in piece
        plain = {k: v for k, v in piece.items() if k != "cache_control"} if isinstance(piece, dict) else piece
        text = orjson.dumps(plain, option=orjson.OPT_SORT_KEYS)
        running.update(len(text).to_bytes(8, "big") + text)
        ttl = str((piece["cache_control"] or {}).get("ttl", "5m")) if marked else ""
        blocks.append(Block(max(1, len(text) // BYTES_PER_TOKEN), running.copy().digest(), marked, ttl))
    return blocks


def _pieces(body: Mapping[str, Any], anthropic: bool) -> Iterable[Any]:
    yield from body.get("tools") or ()
    if not anthropic:
        yield from body.get("messages") or ()
        return
    system = body.get("system")
    yield from ([{"type": "text", "text": system}] if isinstance(system, str) else system or ())
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, str):
            yield {"role": message.get("role"), "text": content}
        else:
            # The role goes into each block's hash so a user block never matches an assistant one.
            yield from ({"role": message.get("role"), **block} for block in content or ())


def _ttl_refusal(blocks: list[Block]) -> str | None:
    ttls = [b.ttl for b in blocks if b.breakpoint]
    unknown = [t for t in ttls if t not in TTLS]
    if unknown:
        return f"cache_control.ttl: Input should be '5m' or '1h', got {unknown[0]!r}"
    if "1h" in ttls and "5m" in ttls[: len(ttls) - ttls[::-1].index("1h")]:
        return "A cache_control block with ttl '1h' must come before any block with ttl '5m'."
    return None


def _cumulative(blocks: list[Block]) -> list[int]:
    total, ends = 0, []
    for block in blocks:
        total += block.tokens
        ends.append(total)
    return ends

"""Server-sent events, as far as LLM APIs use them: `event:` and `data:` fields, blank-line framing.

Comment lines (`: keep-alive`, OpenRouter's `: OPENROUTER PROCESSING`) are skipped; they still count
as bytes for the stall timeout, which is what they are for.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

import anyio

__all__ = ["SseEvent", "drain", "iter_sse"]


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


async def iter_sse(lines: AsyncIterable[str]) -> AsyncIterator[SseEvent]:
    event = ""
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SseEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield SseEvent(event or "message", "\n".join(data))


async def drain(events: AsyncIterator[SseEvent], limit_s: float = 1.0) -> None:
    """Read past the end marker to the end of the body, so httpx can put the connection back in the
    pool (an unfinished response closes it). Bounded, for servers that keep the stream open."""
    with anyio.move_on_after(limit_s):
        async for _ in events:
            pass

"""Server-sent events, as far as LLM APIs use them: `event:` and `data:` fields, blank-line framing.

Comment lines (`: keep-alive`, OpenRouter's `: OPENROUTER PROCESSING`) are skipped; they still count
as bytes for the stall timeout, which is what they are for.

`body_lines` gives a response's lines as httpx's `aiter_lines` does (the same decoding, the same line
breaks), two generator layers and two chunkers fewer for every piece of a stream, which counts when a
reply arrives in many pieces, as streamed tokens do.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

import anyio
import httpx

__all__ = ["SseEvent", "body_lines", "drain", "iter_sse"]

_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""What `str.splitlines` breaks on, as httpx's line reader does."""


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


async def body_lines(response: httpx.Response, heard: Callable[[], None]) -> AsyncIterator[str]:
    """The decoded body (content encoding undone, then the response's charset, bad bytes replaced), line by
    line; `heard` is told of every piece that arrives (the stall timeout's clock)."""
    text = codecs.getincrementaldecoder(response.encoding or "utf-8")(errors="replace")
    lines = _Lines()
    async for chunk in response.aiter_bytes():
        heard()
        for line in lines.feed(text.decode(chunk)):
            yield line
    for line in lines.feed(text.decode(b"", final=True)) + lines.flush():
        yield line


class _Lines:
    """Lines from text that arrives in pieces; a break split across two pieces (\\r, then \\n) is one break."""

    def __init__(self) -> None:
        self._partial = ""
        self._cr = False

    def feed(self, text: str) -> list[str]:
        if self._cr:
            text, self._cr = "\r" + text, False
        if text.endswith("\r"):  # maybe the first half of \r\n: decided with the next piece
            text, self._cr = text[:-1], True
        if not text:
            return []
        lines = (self._partial + text).splitlines()
        self._partial = "" if text[-1] in _LINE_BREAKS else lines.pop()
        return lines

    def flush(self) -> list[str]:
        if not self._partial and not self._cr:
            return []
        line, self._partial, self._cr = self._partial, "", False
        return [line]


async def drain(events: AsyncIterator[SseEvent], limit_s: float = 1.0) -> None:
    """Read past the end marker to the end of the body, so httpx can put the connection back in the
    pool (an unfinished response closes it). Bounded, for servers that keep the stream open."""
    with anyio.move_on_after(limit_s):
        async for _ in events:
            pass

"""A recording reverse proxy on 127.0.0.1: it forwards every request to a real server unchanged and keeps
what the server itself said each reply cost (its `usage` and llama.cpp's `timings`), so a benchmark can
hold the journal's token counts against the server's own.

    async with usage_tap("http://127.0.0.1:8080") as tap:
        ... point the client at tap.base_url ...
        tap.totals()   # prompt / completion tokens by usage, and by timings (prompt_n + cache_n, predicted_n)

Responses are relayed as they arrive (streams stay streams) and the connection is closed after each
one, which delimits the body without re-chunking it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import httpx
import orjson
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["ServerCount", "UsageTap", "usage_tap"]

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@dataclass
class ServerCount:
    """One reply as the server counted it (None where it sent no such field)."""

    status: int
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    timings_prompt: int | None = None
    """prompt_n + cache_n: every prompt token, computed or taken from the prompt cache."""
    timings_predicted: int | None = None
    tool_calls: set[str] = field(default_factory=set)
    """The reply's tool calls, by index (streamed pieces of one call share its index)."""


@dataclass
class UsageTap:
    upstream: str
    http: httpx.AsyncClient
    base_url: str = ""
    replies: list[ServerCount] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """Connections that ended in an error (the client left early, the upstream dropped), one line each."""

    def totals(self) -> dict[str, int | None]:
        ok = [r for r in self.replies if r.status == 200]
        return {"replies": len(ok),
                "usage_prompt": _sum(r.prompt_tokens for r in ok),
                "usage_completion": _sum(r.completion_tokens for r in ok),
                "timings_prompt": _sum(r.timings_prompt for r in ok),
                "timings_predicted": _sum(r.timings_predicted for r in ok),
                "without_usage": sum(r.prompt_tokens is None for r in ok),
                "tool_calls": sum(len(r.tool_calls) for r in ok),
                "replies_with_calls": sum(bool(r.tool_calls) for r in ok)}

    async def handle(self, stream: anyio.abc.ByteStream) -> None:
        # One connection's trouble (a client that closes early, an upstream that drops) ends that
        # connection only: an error escaping here would cancel the listener's task group, and every
        # later request would wait unaccepted.
        try:
            await self._handle(stream)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.BrokenResourceError,
                anyio.ClosedResourceError, httpx.HTTPError, ValueError) as exc:
            self.dropped.append(f"{type(exc).__name__}: {exc}")

    async def _handle(self, stream: anyio.abc.ByteStream) -> None:
        async with stream:
            reader = BufferedByteReceiveStream(stream)
            head = await reader.receive_until(b"\r\n\r\n", 64 * 1024)
            method, path, headers = _parse_head(head)
            body = await reader.receive_exactly(int(headers.get("content-length", "0")))
            forward = {k: v for k, v in headers.items() if k not in _HOP_HEADERS}
            request = self.http.build_request(method, self.upstream + path, content=body, headers=forward)
            response = await self.http.send(request, stream=True)
            try:
                await self._relay(stream, response)
            finally:
                await response.aclose()

    async def _relay(self, stream: anyio.abc.ByteStream, response: httpx.Response) -> None:
        count = ServerCount(response.status_code)
        self.replies.append(count)
        lines = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
        lines += [f"{k}: {v}" for k, v in response.headers.items() if k.lower() not in _HOP_HEADERS]
        lines.append("connection: close")
        await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        seen = bytearray()
        try:
            async for chunk in response.aiter_raw():
                seen += chunk
                await stream.send(chunk)
        finally:
            _read_counts(bytes(seen), count)  # what the server said, even if the client left early


def _read_counts(body: bytes, count: ServerCount) -> None:
    """The last `usage` and `timings` in a JSON body or an SSE stream, and the tool calls it carries."""
    text = body.decode("utf-8", "replace")
    pieces = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")] or [text]
    for piece in pieces:
        try:
            data = orjson.loads(piece)
        except orjson.JSONDecodeError:
            continue
        if isinstance(data, dict):
            _take(data, count)


def _take(data: Mapping[str, Any], count: ServerCount) -> None:
    usage = data.get("usage")
    if isinstance(usage, dict):
        count.prompt_tokens = int(usage.get("prompt_tokens") or 0)
        count.completion_tokens = int(usage.get("completion_tokens") or 0)
    timings = data.get("timings")
    if isinstance(timings, dict):
        count.timings_prompt = int(timings.get("prompt_n") or 0) + int(timings.get("cache_n") or 0)
        count.timings_predicted = int(timings.get("predicted_n") or 0)
    for choice in data.get("choices") or ():
        message = (choice.get("message") or choice.get("delta") or {}) if isinstance(choice, dict) else {}
        for position, call in enumerate(message.get("tool_calls") or ()):
            count.tool_calls.add(str(call.get("index", position)) if isinstance(call, dict) else str(position))


def _sum(values: Any) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    return method, path, headers


@asynccontextmanager
async def usage_tap(upstream: str) -> AsyncIterator[UsageTap]:
    timeout = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=60.0)
    async with httpx.AsyncClient(timeout=timeout) as http:
        tap = UsageTap(upstream.rstrip("/"), http)
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        tap.base_url = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"
        async with listener, anyio.create_task_group() as group:
            group.start_soon(listener.serve, tap.handle)
            try:
                yield tap
            finally:
                group.cancel_scope.cancel()

"""A loopback mock LLM provider: a real HTTP/1.1 server on 127.0.0.1, written on anyio streams.

It speaks OpenAI-compatible chat completions (`.../chat/completions`, SSE or plain JSON) and Anthropic
Messages (`.../messages`, SSE or plain JSON), records every request it receives, and answers each one
from a script (FIFO) or, when the script is empty, from a responder function:

    async with serve_mock() as mock:
        mock.script(Failure(429, retry_after="1"), Reply(text="hello", usage=MockUsage(120, 20)))
        client = OpenAICompatClient("m", base_url=mock.base_url + "/v1", api_key="k", http=http)
        await client.respond(request)
        assert mock.requests[1].body["parallel_tool_calls"] is False

Prefix caching: `serve_mock(cache=PrefixCache())` bills each prompt as the provider's cache would
(Anthropic breakpoints and minimum length, OpenAI's automatic prefixes; see bench/mock_cache.py).

A local server's own pages: `mock.info` maps a path to the JSON a GET of it answers (404 otherwise;
GETs are kept in `mock.gets`, not in `requests`), e.g. `llama_cpp_info(slots=1)`'s `/props` and
`/slots` as llama.cpp's server sends them, or `vllm_info(...)`'s `/v1/models`. `mock.slots = n` works
on n requests at a time, as llama.cpp's `-np n` does: the others wait, and like llama.cpp the mock
sends them nothing, not even headers, until a slot takes them.

A whole server dies with `mock.kill()` (or by itself once it has answered `mock.die_after` requests):
its port refuses connections and its open connections drop, as a crashed replica's would.

Faults: `Failure(status, retry_after=...)` for 429 / 5xx / 4xx (`body=` for a server's own error
shape); `Reply(stall_after=n)` streams n events then goes silent, `Reply(end_after=n)` ends the
stream cleanly after n events; `Reply(delay_s=...)` answers late, `chunk_delay_s` streams slowly,
`stream_usage=False` ignores `include_usage`. `bench/mock_quirks.py` adds whole server modes
(llama-cpp-python's behaviours among them). The default responder, `tool_loop()`, answers
tool-calling turns generically (a few tool calls, then `finish`, with arguments made up from the
tools' schemas), so whole episodes can run against it.

Batch APIs: OpenAI's `/v1/files` + `/v1/batches` and Anthropic's `/v1/messages/batches`, each item
answered by `answer` exactly as the live endpoint answers the same body (bench/mock_batches.py;
`mock.batches.settings` for latency, errored items, expiry and whole-batch failure).

Use it inside one task (`async with` in the test or benchmark body): its connections live in a task
group that the context manager opens and closes.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import orjson
from anyio.streams.buffered import BufferedByteReceiveStream

from bench import mock_bodies as bodies
from bench import mock_wire as wire
from bench.mock_batches import BatchSettings, MockBatches
from bench.mock_cache import PrefixCache
from bench.mock_responders import llama_cpp_info, minimal_value, tool_loop, vllm_info
from bench.mock_types import JSON, Call, Failure, MockUsage, Recorded, Reply, Responder, Response

__all__ = [
    "BatchSettings",
    "JSON",
    "Call",
    "Failure",
    "MockProvider",
    "MockUsage",
    "PrefixCache",
    "Recorded",
    "Reply",
    "Responder",
    "Response",
    "llama_cpp_info",
    "minimal_value",
    "serve_mock",
    "tool_loop",
    "vllm_info",
]


class MockProvider:
    def __init__(self, responder: Responder, cache: PrefixCache | None = None) -> None:
        self.responder = responder
        self.cache = cache
        """When set, replies' prompt usage is what this prefix cache bills (see bench/mock_cache.py)."""
        self.requests: list[Recorded] = []
        self.keep_requests = True
        """False: `requests` stays empty (a long bench's run would otherwise hold every body it sent)."""
        self.connections = 0
        """Connections accepted so far (keep-alive reuse shows as fewer connections than requests)."""
        self.base_url = ""
        self.answered = 0
        """Replies written whole (successes only)."""
        self.die_after: int | None = None
        """When set: the server dies (`kill`) as soon as it has answered this many requests."""
        self.killed_at: float | None = None
        """`time.time()` when it died."""
        self.info: dict[str, JSON] = {}
        """GET path -> the JSON it answers (a local server's /props, /slots, /v1/models)."""
        self.gets: list[str] = []
        self.slots: int | None = None
        """Requests worked on at once (None: all); the others wait, sent nothing, as at llama.cpp."""
        self.most_at_once = 0
        """The most requests worked on at once so far."""
        self._working = 0
        self._slot_free: anyio.Condition | None = None
        self._serving = anyio.CancelScope()
        self._dead: anyio.Event | None = None
        self._script: deque[Response] = deque()
        self._ids = itertools.count(1)
        self.batches = MockBatches(self)
        """The batch APIs (OpenAI files + batches, Anthropic message batches): bench/mock_batches.py;
        `mock.batches.offered = False` answers them 404, as llama.cpp and vLLM do."""

    def script(self, *responses: Response) -> None:
        """Answer the next requests with these, in order, before falling back to the responder."""
        self._script.extend(responses)

    def kill(self) -> None:
        """Die like a crashed replica: the listening socket closes (new connections are refused) and every
        open connection drops, replies in flight cut short."""
        if self.killed_at is None:
            self.killed_at = time.time()
            self._serving.cancel()
            if self._dead is not None:
                self._dead.set()

    async def wait_dead(self) -> None:
        if self.killed_at is None:
            self._dead = self._dead or anyio.Event()
            await self._dead.wait()

    async def serve(self, listener: anyio.abc.Listener[anyio.abc.SocketStream]) -> None:
        with self._serving:
            async with listener:
                await listener.serve(self.handle)

    def _answered_one(self) -> None:
        self.answered += 1
        if self.die_after is not None and self.answered >= self.die_after:
            self.kill()

    def decide(self, request: Recorded) -> Response:
        return self._script.popleft() if self._script else self.answer(request)

    def answer(self, request: Recorded) -> Response:
        """The responder's answer, billed by the prefix cache: what a live call gets when nothing is
        scripted, and what each item of a batch gets (bench/mock_batches.py)."""
        response = self.responder(request)
        if self.cache is None or not isinstance(response, Reply):
            return response
        billed = self.cache.bill(request._fields(), anthropic=request.dialect == "anthropic")
        if isinstance(billed, str):
            return Failure(400, billed)
        usage = dataclasses.replace(response.usage, input_tokens=billed.input_tokens,
                                    cached_tokens=billed.cached_tokens, cache_write_tokens=billed.cache_write_tokens,
                                    cache_write_1h_tokens=billed.cache_write_1h_tokens)
        return dataclasses.replace(response, usage=usage)

    async def handle(self, stream: anyio.abc.ByteStream) -> None:
        self.connections += 1
        try:
            async with stream:
                reader = BufferedByteReceiveStream(stream)
                while await self._serve_one(stream, reader):
                    pass
        except wire.CONNECTION_ERRORS:
            pass  # the client went away: normal for timeouts and stalls

    async def _serve_one(self, stream: anyio.abc.ByteStream, reader: BufferedByteReceiveStream) -> bool:
        """Read one request and answer it; True to keep the connection open."""
        head = await reader.receive_until(b"\r\n\r\n", wire.MAX_HEAD)
        method, path, headers = wire.parse_head(head)
        raw = await reader.receive_exactly(int(headers.get("content-length", "0")))
        if self.batches.handles(path):
            answer = self.batches.serve(method, path, headers, raw)
            if answer is None:
                return False  # carried out, answer lost: the connection closes unanswered
            await stream.send(answer)
            return True
        try:
            body = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            await stream.send(wire.http(400, {"error": {"message": "body is not JSON"}}, {}))
            return True
        if method == "GET":
            self.gets.append(path)
            page = self.info.get(path)
            await stream.send(wire.http(200, page, {}) if page is not None else
                              wire.http(404, {"error": {"message": f"no page {path}", "code": 404}}, {}))
            return True
        request = Recorded(method, path, headers, body, raw, time.monotonic())
        if self.keep_requests:
            self.requests.append(request)
        async with self._slot():
            return await self._answer(stream, request, headers)

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        if self._slot_free is None:
            self._slot_free = anyio.Condition()
        async with self._slot_free:
            while self.slots is not None and self._working >= self.slots:
                await self._slot_free.wait()
            self._working += 1
            self.most_at_once = max(self.most_at_once, self._working)
        try:
            yield
        finally:
            self._working -= 1
            with anyio.CancelScope(shield=True):
                async with self._slot_free:
                    self._slot_free.notify()

    async def _answer(self, stream: anyio.abc.ByteStream, request: Recorded, headers: Mapping[str, str]) -> bool:
        response = self.decide(request)
        await anyio.sleep(response.delay_s)
        if isinstance(response, Failure):
            await stream.send(wire.failure_bytes(request, response))
        elif request.streaming:
            keep = await self._stream(stream, request, response)
            if keep:  # False: it stalled on purpose, no answer
                self._answered_one()
            return keep
        else:
            await stream.send(wire.http(200, bodies.whole(request, response, self._ids), response.headers))
            self._answered_one()
        return headers.get("connection", "").lower() != "close"

    async def _stream(self, stream: anyio.abc.ByteStream, request: Recorded, reply: Reply) -> bool:
        events = bodies.sse(request, reply, self._ids)
        head = {"content-type": "text/event-stream", "transfer-encoding": "chunked", **reply.headers}
        await stream.send(wire.head(200, head))
        for sent, event in enumerate(events):
            if reply.stall_after is not None and sent >= reply.stall_after:
                await wire.stall(stream)
                return False
            if reply.end_after is not None and sent >= reply.end_after:
                break
            await stream.send(wire.chunk(event))
            await anyio.sleep(reply.chunk_delay_s)
        await stream.send(b"0\r\n\r\n")
        return True


@asynccontextmanager
async def serve_mock(responder: Responder | None = None,
                     cache: PrefixCache | None = None, port: int = 0) -> AsyncIterator[MockProvider]:
    """Serve on a loopback port (an ephemeral one unless `port` is given: a server coming back where one
    died); `mock.base_url` is `http://127.0.0.1:<port>`. With `cache`, usage reports prefix-cache reads
    and writes as the provider would."""
    mock = MockProvider(responder or tool_loop(), cache)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    mock.base_url = f"http://127.0.0.1:{port}"
    async with anyio.create_task_group() as group:
        group.start_soon(mock.serve, listener)
        try:
            yield mock
        finally:
            group.cancel_scope.cancel()

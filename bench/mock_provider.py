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

Use it inside one task (`async with` in the test or benchmark body): its connections live in a task
group that the context manager opens and closes.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

import anyio
import anyio.abc
import orjson
from anyio.streams.buffered import BufferedByteReceiveStream

from bench.mock_cache import PrefixCache

__all__ = [
    "Call",
    "Failure",
    "MockProvider",
    "MockUsage",
    "PrefixCache",
    "Recorded",
    "Reply",
    "Responder",
    "llama_cpp_info",
    "minimal_value",
    "serve_mock",
    "tool_loop",
    "vllm_info",
]

JSON = Any
Dialect = Literal["openai", "anthropic"]
Ids = Iterator[int]

_MAX_HEAD = 64 * 1024
_STALL_LIMIT_S = 60.0
_CONNECTION_ERRORS = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError,
                      anyio.ClosedResourceError, anyio.DelimiterNotFound, ConnectionError)
_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          529: "overloaded_error"}


@dataclass(frozen=True)
class MockUsage:
    input_tokens: int = 100
    """Every prompt token, cached and cache-written ones included."""
    output_tokens: int = 20
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    """Anthropic dialect: the part of `cache_write_tokens` written to the 1-hour cache (sent in
    `usage.cache_creation` beside the 5-minute part)."""
    cost_usd: float | None = None
    """Sent as OpenRouter's `usage.cost` (OpenAI dialect only)."""


@dataclass(frozen=True)
class Call:
    name: str
    arguments: JSON = field(default_factory=dict)
    """A value is sent as JSON; a str is sent as is (so it may be malformed on purpose)."""
    id: str = ""

    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else orjson.dumps(self.arguments).decode()


@dataclass(frozen=True)
class Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[Call, ...] = ()
    usage: MockUsage = MockUsage()
    reasoning_field: str = "reasoning_content"
    """OpenAI dialect: the delta field that carries reasoning ("reasoning_content" or "reasoning")."""
    reasoning_details: tuple[Mapping[str, JSON], ...] = ()
    """OpenAI dialect, OpenRouter-style: each entry is streamed as its own delta."""
    signature: str = "sig-mock"
    """Anthropic: the thinking block's signature."""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    """Before the status line."""
    chunk_delay_s: float = 0.0
    stall_after: int | None = None
    """Streams this many events, then sends nothing more until the client gives up."""
    end_after: int | None = None
    """Streams this many events, then ends the body cleanly: no finish reason, no `[DONE]` (0: an
    empty 200, as llama-cpp-python sends for a streamed tool call that failed on its side)."""
    stream_usage: bool = True
    """OpenAI dialect: False ignores `stream_options.include_usage` (llama-cpp-python does)."""
    served_model: str | None = None
    """The reply's `model` field (the provider's dated version); None: the model the request named."""


@dataclass(frozen=True)
class Failure:
    status: int
    message: str = "mock failure"
    retry_after: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    body: JSON = None
    """The whole JSON body to send instead of the usual `{"error": ...}` (a server's own error shape)."""


Response = Reply | Failure


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: Mapping[str, str]
    """Lower-case names."""
    body: JSON
    """The parsed JSON body ({} when there was none)."""
    raw: bytes
    at: float
    """time.monotonic() when the request was fully received."""

    @property
    def dialect(self) -> Dialect:
        return "anthropic" if self.path.rstrip("/").endswith("/messages") else "openai"

    @property
    def streaming(self) -> bool:
        return bool(self._fields().get("stream"))

    def tools(self) -> list[tuple[str, Mapping[str, JSON]]]:
        """(name, parameter schema) of each tool offered, in either dialect."""
        found = []
        for tool in self._fields().get("tools") or ():
            spec = tool.get("function", tool)
            found.append((spec["name"], spec.get("parameters") or spec.get("input_schema") or {}))
        return found

    def tool_results(self) -> int:
        """How many tool results the conversation holds so far."""
        count = 0
        for message in self._fields().get("messages") or ():
            if message.get("role") == "tool":
                count += 1
            elif isinstance(message.get("content"), list):
                count += sum(1 for b in message["content"] if b.get("type") == "tool_result")
        return count

    def _fields(self) -> Mapping[str, JSON]:
        return self.body if isinstance(self.body, dict) else {}


Responder = Callable[[Recorded], Response]


class MockProvider:
    def __init__(self, responder: Responder, cache: PrefixCache | None = None) -> None:
        self.responder = responder
        self.cache = cache
        """When set, replies' prompt usage is what this prefix cache bills (see bench/mock_cache.py)."""
        self.requests: list[Recorded] = []
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
        response = self._script.popleft() if self._script else self.responder(request)
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
        except _CONNECTION_ERRORS:
            pass  # the client went away: normal for timeouts and stalls

    async def _serve_one(self, stream: anyio.abc.ByteStream, reader: BufferedByteReceiveStream) -> bool:
        """Read one request and answer it; True to keep the connection open."""
        head = await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)
        method, path, headers = _parse_head(head)
        raw = await reader.receive_exactly(int(headers.get("content-length", "0")))
        try:
            body = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            await stream.send(_http(400, {"error": {"message": "body is not JSON"}}, {}))
            return True
        if method == "GET":
            self.gets.append(path)
            page = self.info.get(path)
            await stream.send(_http(200, page, {}) if page is not None else
                              _http(404, {"error": {"message": f"no page {path}", "code": 404}}, {}))
            return True
        request = Recorded(method, path, headers, body, raw, time.monotonic())
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
            await stream.send(_failure(request, response))
        elif request.streaming:
            keep = await self._stream(stream, request, response)
            if keep:  # False: it stalled on purpose, no answer
                self._answered_one()
            return keep
        else:
            await stream.send(_http(200, _whole(request, response, self._ids), response.headers))
            self._answered_one()
        return headers.get("connection", "").lower() != "close"

    async def _stream(self, stream: anyio.abc.ByteStream, request: Recorded, reply: Reply) -> bool:
        events = _sse(request, reply, self._ids)
        head = {"content-type": "text/event-stream", "transfer-encoding": "chunked", **reply.headers}
        await stream.send(_head(200, head))
        for sent, event in enumerate(events):
            if reply.stall_after is not None and sent >= reply.stall_after:
                await _stall(stream)
                return False
            if reply.end_after is not None and sent >= reply.end_after:
                break
            await stream.send(_chunk(event))
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


def llama_cpp_info(slots: int = 1, n_ctx: int = 8192, alias: str = "smol") -> dict[str, JSON]:
    """llama.cpp's /props and /slots as its server sends them (the fields shiftbench reads, and their
    neighbours, from llama.cpp served by xllamacpp 2026.10 with `-c 8192 -np 1`; bench/README.md)."""
    props = {"default_generation_settings": {"params": {"temperature": 0.8, "top_k": 40, "max_tokens": -1,
                                                        "n_predict": -1, "stream": False},
                                             "n_ctx": n_ctx},
             "total_slots": slots, "model_alias": alias, "model_ftype": "Q4_1",
             "modalities": {"vision": False, "video": False, "audio": False},
             "endpoint_slots": True, "endpoint_props": False, "endpoint_metrics": False,
             "chat_template": "{{ messages }}", "build_info": "b0-unknown"}
    per_slot = [{"id": i, "n_ctx": n_ctx, "speculative": False, "is_processing": False} for i in range(slots)]
    return {"/props": props, "/slots": per_slot}


def vllm_info(model: str = "Qwen/Qwen3-32B", max_model_len: int = 32_768) -> dict[str, JSON]:
    """vLLM's /v1/models: the context (`max_model_len`) is there; its --max-num-seqs is published nowhere."""
    return {"/v1/models": {"object": "list", "data": [
        {"id": model, "object": "model", "created": 0, "owned_by": "vllm", "root": model, "parent": None,
         "max_model_len": max_model_len, "permission": []}]}}


def tool_loop(calls_before_finish: int = 2, tool: str | None = None, finish: str = "finish",
              output_tokens: int = 20) -> Responder:
    """Answer any tool-calling conversation: call `tool` (default: the first tool that is not `finish`)
    until the conversation holds `calls_before_finish` tool results, then call `finish`. Arguments
    are the smallest values the schemas allow. Without tools, reply with text."""

    def respond(request: Recorded) -> Response:
        tools = dict(request.tools())
        usage = MockUsage(input_tokens=max(1, len(request.raw) // 4), output_tokens=output_tokens)
        if not tools:
            return Reply(text="ok", usage=usage)
        others = [name for name in tools if name != finish]
        chosen = tool if tool in tools else (others[0] if others else finish)
        name = finish if request.tool_results() >= calls_before_finish and finish in tools else chosen
        return Reply(tool_calls=(Call(name, minimal_value(tools[name])),), usage=usage)

    return respond


def minimal_value(schema: Mapping[str, JSON]) -> JSON:
    """The simplest value a (JSON) schema accepts: required properties only, first enum entry, ..."""
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return minimal_value(schema[key][0])
    kind = schema.get("type", "object")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: minimal_value(properties.get(name, {})) for name in schema.get("required") or ()}
    if kind == "array":
        return [minimal_value(schema.get("items") or {}) for _ in range(int(schema.get("minItems", 0)))]
    simple: dict[str, JSON] = {"string": "x" * max(1, int(schema.get("minLength", 1))),
                               "integer": int(schema.get("minimum", 0)), "number": schema.get("minimum", 0),
                               "boolean": False, "null": None}
    return simple.get(kind)


# ---- the wire: HTTP/1.1 framing -------------------------------------------------------------------


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return method, path, headers


def _head(status: int, headers: Mapping[str, str]) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Overloaded" if status == 529 else "Error"
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _http(status: int, body: JSON, headers: Mapping[str, str]) -> bytes:
    payload = orjson.dumps(body)
    head = {"content-type": "application/json", "content-length": str(len(payload)), **headers}
    return _head(status, head) + payload


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def _stall(stream: anyio.abc.ByteStream) -> None:
    # Silent until the client hangs up (its stall timeout), bounded so a test can never hang on it.
    with anyio.move_on_after(_STALL_LIMIT_S):
        try:
            await stream.receive()
        except _CONNECTION_ERRORS:
            pass


def _failure(request: Recorded, failure: Failure) -> bytes:
    headers = dict(failure.headers)
    if failure.retry_after is not None:
        headers["retry-after"] = failure.retry_after
    if failure.body is not None:
        body: JSON = failure.body
    elif request.dialect == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(failure.status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": failure.message}}
    else:
        body = {"error": {"message": failure.message, "type": "mock_error", "code": failure.status}}
    return _http(failure.status, body, headers)


# ---- the bodies: one reply in each dialect ------------------------------------------------------------


def _whole(request: Recorded, reply: Reply, ids: Ids) -> JSON:
    if request.dialect == "anthropic":
        return _anthropic_message(request, reply, ids)
    return _openai_completion(request, reply, ids)


def _sse(request: Recorded, reply: Reply, ids: Ids) -> list[bytes]:
    if request.dialect == "anthropic":
        return [f"event: {e['type']}\ndata: ".encode() + orjson.dumps(e) + b"\n\n"
                for e in _anthropic_events(request, reply, ids)]
    chunks = [b"data: " + orjson.dumps(c) + b"\n\n" for c in _openai_chunks(request, reply, ids)]
    return chunks + [b"data: [DONE]\n\n"]


def _openai_chunks(request: Recorded, reply: Reply, ids: Ids) -> list[JSON]:
    completion_id, model = f"chatcmpl-{next(ids)}", reply.served_model or request.body.get("model", "mock")

    def chunk(choices: list[JSON], **extra: JSON) -> JSON:
        return {"id": completion_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": choices, **extra}

    deltas: list[JSON] = [{"role": "assistant"}]
    deltas += [{reply.reasoning_field: piece} for piece in _halves(reply.reasoning)]
    for index, detail in enumerate(reply.reasoning_details):
        deltas += [{"reasoning_details": [piece]} for piece in _detail_pieces(index, detail)]
    deltas += [{"content": piece} for piece in _halves(reply.text)]
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_{next(ids)}"
        deltas.append({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                       "function": {"name": call.name, "arguments": ""}}]})
        deltas += [{"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                   for piece in _halves(call.arguments_text())]
    chunks = [chunk([{"index": 0, "delta": delta, "finish_reason": None}]) for delta in deltas]
    finish = "tool_calls" if reply.tool_calls else "stop"
    chunks.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    if reply.stream_usage and (request.body.get("stream_options") or {}).get("include_usage"):
        chunks.append(chunk([], usage=_openai_usage(reply.usage)))
    return chunks


def _openai_completion(request: Recorded, reply: Reply, ids: Ids) -> JSON:
    message: dict[str, JSON] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message[reply.reasoning_field] = reply.reasoning
    if reply.reasoning_details:
        message["reasoning_details"] = [dict(d) for d in reply.reasoning_details]
    if reply.tool_calls:
        message["tool_calls"] = [{"id": c.id or f"call_{next(ids)}", "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments_text()}}
                                 for c in reply.tool_calls]
    return {"id": f"chatcmpl-{next(ids)}", "object": "chat.completion", "created": 0,
            "model": reply.served_model or request.body.get("model", "mock"), "usage": _openai_usage(reply.usage),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}]}


def _openai_usage(usage: MockUsage) -> JSON:
    details: dict[str, JSON] = {"cached_tokens": usage.cached_tokens}
    if usage.cache_write_tokens:
        details["cache_write_tokens"] = usage.cache_write_tokens
    out: dict[str, JSON] = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                            "total_tokens": usage.input_tokens + usage.output_tokens,
                            "prompt_tokens_details": details}
    if usage.cost_usd is not None:
        out["cost"] = usage.cost_usd
    return out


def _anthropic_prompt_usage(usage: MockUsage) -> dict[str, JSON]:
    """Anthropic's prompt counts: uncached, written (in total and split by TTL) and read apart."""
    return {"input_tokens": usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cached_tokens,
            "cache_creation": {"ephemeral_5m_input_tokens": usage.cache_write_tokens - usage.cache_write_1h_tokens,
                               "ephemeral_1h_input_tokens": usage.cache_write_1h_tokens}}


def _anthropic_events(request: Recorded, reply: Reply, ids: Ids) -> list[JSON]:
    usage = reply.usage
    start_usage = {**_anthropic_prompt_usage(usage), "output_tokens": 1}
    message = {"id": f"msg_{next(ids)}", "type": "message", "role": "assistant", "content": [],
               "model": reply.served_model or request.body.get("model", "mock"), "stop_reason": None,
               "stop_sequence": None,
               "usage": start_usage}
    events: list[JSON] = [{"type": "message_start", "message": message}, {"type": "ping"}]
    for index, block in enumerate(_anthropic_blocks(reply, ids)):
        events += _block_events(index, block)
    stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    events.append({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                   "usage": {"output_tokens": usage.output_tokens}})
    events.append({"type": "message_stop"})
    return events


def _anthropic_message(request: Recorded, reply: Reply, ids: Ids) -> JSON:
    usage = reply.usage
    return {"id": f"msg_{next(ids)}", "type": "message", "role": "assistant",
            "model": reply.served_model or request.body.get("model", "mock"),
            "content": [{k: v for k, v in b.items() if k != "_text"} for b in _anthropic_blocks(reply, ids)],
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None,
            "usage": {**_anthropic_prompt_usage(usage), "output_tokens": usage.output_tokens}}


def _anthropic_blocks(reply: Reply, ids: Ids) -> list[dict[str, JSON]]:
    blocks: list[dict[str, JSON]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": reply.signature})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        # `_text` is what the stream sends as input_json_delta pieces (possibly malformed on purpose).
        arguments = {} if isinstance(call.arguments, str) else call.arguments
        blocks.append({"type": "tool_use", "id": call.id or f"toolu_{next(ids)}", "name": call.name,
                       "input": arguments, "_text": call.arguments_text()})
    return blocks


def _block_events(index: int, block: Mapping[str, JSON]) -> list[JSON]:
    kind = block["type"]
    deltas: list[JSON]
    if kind == "thinking":
        start: JSON = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _halves(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in _halves(block["text"])]
    else:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _halves(block["_text"])]
    return ([{"type": "content_block_start", "index": index, "content_block": start}]
            + [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            + [{"type": "content_block_stop", "index": index}])


def _detail_pieces(index: int, detail: Mapping[str, JSON]) -> list[JSON]:
    """An OpenRouter reasoning detail as streamed: its text in two deltas, the signature on the last."""
    text = detail.get("text")
    if not isinstance(text, str) or len(text) < 2:
        return [{**detail, "index": index}]
    first, second = _halves(text)
    head = {k: v for k, v in detail.items() if k not in ("text", "signature")}
    tail = {"type": detail.get("type"), "index": index, "text": second, "signature": detail.get("signature")}
    return [{**head, "index": index, "text": first, "signature": None}, tail]


def _halves(text: str) -> list[str]:
    """Text in two pieces, so clients are shown that deltas must be joined."""
    middle = len(text) // 2
    return [piece for piece in (text[:middle], text[middle:]) if piece]

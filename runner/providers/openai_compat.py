"""OpenAI-compatible chat completions: OpenAI, OpenRouter, vLLM, Fireworks, Together, Ollama.

Request: the system prompt as the first message, the tools as given (OpenAI function format) with
`parallel_tool_calls: false` (the agent makes one call per turn), assistant turns with `tool_calls`,
tool results as `role: tool` messages with their `tool_call_id`; streamed with
`stream_options.include_usage` so the last chunk carries the usage. Bodies keep to what the widest
set of servers accepts: an assistant turn's `content` is always a string (`""` with tool calls;
llama-cpp-python rejects `null`), `tool_choice` / `parallel_tool_calls` go only with `tools`, and
`temperature` only when the sweep sets one (OpenAI's reasoning models refuse it), `seed` only for
the replicas of `--replicas K` (each its own; Anthropic's Messages API takes none and is sent none).
`extra_body` is scoped by call purpose (`ExtraBody`). A non-streamed call has no stall timeout:
the server is silent until its answer is whole, so only the attempt's total timeout ends it.

Reasoning arrives as `reasoning_content` (vLLM, DeepSeek, Fireworks) or `reasoning` (OpenRouter,
Together, Ollama, newer vLLM) deltas, and on OpenRouter also as structured `reasoning_details` (with
signatures or encrypted data). It is passed back the way it came: `reasoning_details` verbatim when
there were any (OpenRouter's documented way to preserve reasoning), else the text under the field
name it arrived in. `provider_state` keeps the field name and the details.

Usage: `input_tokens` counts every prompt token (OpenAI's `prompt_tokens` already includes cached
ones); `prompt_tokens_details.cached_tokens` are the cache hits; OpenRouter's `usage.cost` is the
reported cost. The body puts `tools` before `messages` (stable parts first, byte for byte) and, where
the endpoint accepts it (`prompt_cache_key = true`; on by default for OpenAI), a `prompt_cache_key`
per stream (runner.providers.prompt_cache). A reply without usage (llama-cpp-python ignores
`include_usage` when streaming) is counted from the bytes sent and received and marked `estimated`,
never as 0 tokens.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import orjson

from runner.providers.batch_http import BatchTarget
from runner.providers.breaker import CircuitBreaker
from runner.providers.endpoint import (
    Endpoint,
    ExtraBody,
    estimate_tokens,
    estimated_usage,
    merge_extra,
    model_response,
)
from runner.providers.failures import AttemptFailed, parse_json_object, stream_error
from runner.providers.ledger import request_key
from runner.providers.pool import PooledEndpoint, Router, pooled
from runner.providers.prompt_cache import prompt_cache_key
from runner.providers.ratelimit import RateLimiter
from runner.providers.retry import Attempt, Retrier
from runner.providers.secret import HeaderAuth, Secret
from runner.providers.server_info import ServerInfo, server_info
from runner.providers.server_queue import ServerQueue
from runner.providers.sse import body_lines, drain, iter_sse
from runner.providers.taxonomy import Failure
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import JSON, AssistantTurn, Message, ToolCall

__all__ = ["OpenAICompatClient", "parse_completion", "parse_usage"]

STATE_KEY = "openai_compat"
_REASONING_FIELDS = ("reasoning_content", "reasoning")
_CONCATENATED_DETAIL_FIELDS = ("text", "summary", "data", "signature")
_NEEDS_TOOLS = ("tool_choice", "parallel_tool_calls")


class OpenAICompatClient:
    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | Secret,
        http: httpx.AsyncClient,
        name: str | None = None,
        retrier: Retrier | None = None,
        limiter: RateLimiter | None = None,
        breaker: CircuitBreaker | None = None,
        queue: ServerQueue | None = None,
        router: Router | None = None,
        stream: bool = True,
        max_tokens_field: str = "max_tokens",
        echo_reasoning: bool = True,
        extra_body: Mapping[str, JSON] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        wall_clock: Callable[[], float] = time.time,
        cache_key: bool = False,
        temperature: float | None = None,
    ) -> None:
        """`cache_key`: send OpenAI's `prompt_cache_key` (a hash of the request's stream); strict
        servers may reject the unknown field, so it is off unless the endpoint accepts it. `temperature`:
        sent on every call when set, never otherwise (OpenAI's reasoning models refuse it).
        `max_tokens_field`: "max_completion_tokens" for OpenAI's reasoning models. `echo_reasoning`:
        False for servers that reject reasoning in the history. `extra_body`: e.g. OpenRouter's
        `reasoning` or `provider` settings, sampling parameters; a None value removes a field
        (`{"parallel_tool_calls": None}` for a server that rejects it); sub-tables `agent`, `judge`,
        `method`, `probe` scope fields to those calls (`ExtraBody`). `router`: an endpoint pool
        (`runner.providers.pool`), whose replicas' limiters and breakers replace `limiter` and `breaker`."""
        secret = api_key if isinstance(api_key, Secret) else Secret(api_key)
        self.model = model
        self._name = name or model
        self._retrier = retrier or Retrier()
        self._stream = stream
        self._max_tokens_field = max_tokens_field
        self._temperature = temperature
        self._echo_reasoning = echo_reasoning
        self._cache_key = cache_key
        self._extra_fields = dict(extra_body or {})
        self._extra_body = ExtraBody.parse(extra_body)
        headers = {"content-type": "application/json", **(extra_headers or {})}

        def endpoint(base: str, key: Secret, limits: RateLimiter, breaks: CircuitBreaker, queued: ServerQueue
                     ) -> Endpoint:
            return Endpoint(url=base.rstrip("/") + "/chat/completions", http=http, secret=key,
                            auth=HeaderAuth("authorization", key, prefix="Bearer "), limiter=limits, breaker=breaks,
                            headers=headers, wall_clock=wall_clock, stall_timeout=stream, queue=queued)

        self._endpoint: Endpoint | PooledEndpoint = (
            endpoint(base_url, secret, limiter or RateLimiter(), breaker or CircuitBreaker(), queue or ServerQueue())
            if router is None
            else pooled(router, lambda r: endpoint(r.base_url, r.secret or secret, r.limiter, r.breaker, r.queue)))

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"OpenAICompatClient({self.model!r}, url={self._endpoint.url!r})"

    @property
    def base_url(self) -> str:
        return self._endpoint.url.removesuffix("/chat/completions")

    @property
    def streams(self) -> bool:
        return self._stream

    async def server_info(self) -> list[tuple[str, ServerInfo]]:
        """What each server behind this client publishes (its base URL and `ServerInfo`); the slots found
        go to that server's queue, so time queued behind them is not taken for a stall."""
        found = []
        endpoints = self._endpoint.endpoints if isinstance(self._endpoint, PooledEndpoint) else (self._endpoint,)
        for endpoint in endpoints:
            base = endpoint.url.removesuffix("/chat/completions")
            info = await server_info(endpoint.http, base, endpoint.auth)
            endpoint.queue.slots = info.slots
            found.append((base, info))
        return found

    def variant(self, *, stream: bool | None = None, extra_body: Mapping[str, JSON] | None = None
                ) -> OpenAICompatClient:
        """The same endpoint (connection pool, rate limiter, key, retries), streamed or not and with
        more `extra_body` fields: how `probe --full` tries the settings a sweep file can choose."""
        clone = copy.copy(self)
        if stream is not None:
            clone._stream = stream
            clone._endpoint = self._endpoint.with_stall_timeout(stream)
        if extra_body:
            clone._extra_fields = {**self._extra_fields, **extra_body}
            clone._extra_body = ExtraBody.parse(clone._extra_fields)
        return clone

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return await self.send_body(self.body(request), request.max_output_tokens)

    async def send_body(self, body: Mapping[str, JSON], max_output_tokens: int) -> ModelResponse:
        """Send a body as built by `body()` (or changed from it, as `probe --full` does to test a server)."""
        payload = orjson.dumps(body)
        reserve = estimate_tokens(payload, max_output_tokens)
        read = self._read_stream if self._stream else self._read_json

        async def read_counted(response: httpx.Response, attempt: Attempt) -> AssistantTurn:
            turn = await read(response, attempt)
            if attempt.usage == Usage():
                attempt.usage = estimated_usage(payload, turn, max_output_tokens)
            return turn

        outcome = await self._retrier.call(
            lambda attempt: self._endpoint.send(payload, reserve, attempt, read_counted),
            key=request_key(self._endpoint.url, payload))
        return model_response(outcome)

    def body(self, request: ModelRequest) -> dict[str, JSON]:
        system = [{"role": "system", "content": request.full_system}] if request.full_system else []
        body: dict[str, JSON] = {"model": self.model}
        if request.tools:
            body["tools"] = list(request.tools)  # before the messages: the serialized prompt's stable start
        body["messages"] = system + [self._message(m) for m in request.messages]
        body[self._max_tokens_field] = request.max_output_tokens
        body["stream"] = self._stream
        if self._stream:
            body["stream_options"] = {"include_usage": True}
        if self._temperature is not None:
            body["temperature"] = self._temperature
        if request.seed is not None:  # a stream replica's own samples (`--replicas K`)
            body["seed"] = request.seed
        if request.tools:
            body["parallel_tool_calls"] = False
        if self._cache_key and request.cache_scope:
            body["prompt_cache_key"] = prompt_cache_key(request.cache_scope)
        merge_extra(body, self._extra_body.for_purpose(request.purpose))
        if not request.tools:
            for key in _NEEDS_TOOLS:
                body.pop(key, None)
        return body

    def _message(self, message: Message) -> dict[str, JSON]:
        if message.role == "tool":
            return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
        if message.role == "user":
            return {"role": "user", "content": message.content}
        # "" and never null: OpenAI allows null beside tool calls, but llama-cpp-python rejects it.
        out: dict[str, JSON] = {"role": "assistant", "content": message.content or ""}
        if message.tool_calls:
            out["tool_calls"] = [_tool_call(c) for c in message.tool_calls]
        if self._echo_reasoning:
            out.update(_reasoning_echo(message))
        return out

    async def _read_stream(self, response: httpx.Response, attempt: Attempt) -> AssistantTurn:
        parts = _Assembly()
        events = iter_sse(body_lines(response, attempt.heard))
        async for event in events:
            if event.data.strip() == "[DONE]":
                parts.done = True
                break
            chunk = parse_json_object(event.data)
            if chunk.get("error"):
                raise stream_error(chunk, self._endpoint.secret)
            if not attempt.served_model and isinstance(chunk.get("model"), str):
                attempt.served_model = chunk["model"]
            if chunk.get("usage"):
                attempt.usage = parse_usage(chunk["usage"])  # cumulative where sent more than once
            for choice in chunk.get("choices") or ():
                parts.add(choice.get("delta") or {})
                parts.finish_reason = choice.get("finish_reason") or parts.finish_reason
        if not parts.done and parts.finish_reason is None:
            raise AttemptFailed(Failure.MALFORMED, "stream ended before the response was complete")
        await drain(events)
        return parts.turn()

    async def _read_json(self, response: httpx.Response, attempt: Attempt) -> AssistantTurn:
        data = parse_json_object((await response.aread()).decode("utf-8", "replace"))
        turn, usage, served_model = parse_completion(data, self._endpoint.secret)
        if usage is not None:
            attempt.usage = usage
        attempt.served_model = served_model or attempt.served_model
        return turn

    def batch_target(self) -> BatchTarget:
        """Where this endpoint's batch API is (`runner.providers.batch_openai`): the same connections,
        key and retries. A pool's first server: a batch lives on the server that took it."""
        endpoint = self._endpoint.endpoints[0] if isinstance(self._endpoint, PooledEndpoint) else self._endpoint
        return BatchTarget(endpoint.url.removesuffix("/chat/completions"), endpoint.http, endpoint.secret,
                           endpoint.auth, self._retrier, endpoint.headers, endpoint.wall_clock)


def parse_completion(data: Mapping[str, Any], secret: Secret) -> tuple[AssistantTurn, Usage | None, str]:
    """A whole (non-streamed) chat completion: its turn, its usage (None when it carried none) and the
    model that served it. The live path's non-streamed reply and a batch's output line both read here."""
    if data.get("error"):
        raise stream_error(data, secret)
    usage = parse_usage(data["usage"]) if data.get("usage") else None
    choices = data.get("choices") or [{}]
    parts = _Assembly()
    parts.add(choices[0].get("message") or {})
    return parts.turn(), usage, data["model"] if isinstance(data.get("model"), str) else ""


def parse_usage(usage: Mapping[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    # DeepSeek reports cache hits at the top level instead.
    cached = details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0
    cost = usage.get("cost")
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        cached_input_tokens=int(cached),
        cache_write_tokens=int(details.get("cache_write_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        reported_cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


class _Assembly:
    """A message put together from stream deltas (or taken whole from a non-streamed response)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_field = ""
        self.details: dict[int, dict[str, JSON]] = {}
        self.calls: dict[int | str, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.done = False

    def add(self, delta: Mapping[str, Any]) -> None:
        if delta.get("content"):
            self.text.append(delta["content"])
        self._add_reasoning(delta)
        for position, detail in enumerate(delta.get("reasoning_details") or ()):
            self._add_detail(position, detail)
        for position, call in enumerate(delta.get("tool_calls") or ()):
            self._add_call(position, call)

    def turn(self) -> AssistantTurn:
        # A call needs an id for its result to refer to; a few servers leave it out.
        calls = tuple(ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"])
                      for i, c in enumerate(self.calls.values()))
        state: dict[str, JSON] = {}
        if self.reasoning_field:
            state["reasoning_field"] = self.reasoning_field
        if self.details:
            state["reasoning_details"] = [self.details[i] for i in sorted(self.details)]
        return AssistantTurn(text="".join(self.text), reasoning="".join(self.reasoning), tool_calls=calls,
                             provider_state={STATE_KEY: state} if state else None)

    def _add_reasoning(self, delta: Mapping[str, Any]) -> None:
        # Some servers send the same text under both names; take the first one present.
        for field in _REASONING_FIELDS:
            if delta.get(field):
                self.reasoning.append(delta[field])
                self.reasoning_field = self.reasoning_field or field
                return

    def _add_detail(self, position: int, piece: Mapping[str, JSON]) -> None:
        index = piece.get("index", position)
        merged = self.details.setdefault(index if isinstance(index, int) else position, {})
        for key, value in piece.items():
            if key in _CONCATENATED_DETAIL_FIELDS and isinstance(value, str):
                previous = merged.get(key)
                merged[key] = (previous if isinstance(previous, str) else "") + value
            elif value is not None:
                merged[key] = value

    def _add_call(self, position: int, piece: Mapping[str, Any]) -> None:
        # Streamed calls arrive in pieces keyed by `index`; servers that omit it send each call whole.
        key = piece.get("index", piece.get("id") or position)
        call = self.calls.setdefault(key, {"id": "", "name": "", "arguments": ""})
        function = piece.get("function") or {}
        call["id"] = piece.get("id") or call["id"]
        call["name"] = call["name"] or function.get("name") or ""
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call["arguments"] += arguments
        elif arguments is not None:  # Ollama has sent arguments as an object
            call["arguments"] += orjson.dumps(arguments).decode()


def _tool_call(call: ToolCall) -> dict[str, JSON]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments(call)}}


def _arguments(call: ToolCall) -> str:
    # Arguments that are not a JSON object (a reply cut at max_tokens inside a call) were answered "not
    # executed" by the runner; they go back as "{}", which every server accepts: llama.cpp parses them
    # before rendering its template and refuses the whole request otherwise. Valid ones go back unchanged.
    try:
        parsed = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return "{}"
    return call.arguments if isinstance(parsed, dict) else "{}"


def _reasoning_echo(message: Message) -> dict[str, JSON]:
    state = message.provider_state.get(STATE_KEY) if isinstance(message.provider_state, dict) else None
    state = state if isinstance(state, dict) else {}
    if state.get("reasoning_details"):
        return {"reasoning_details": state["reasoning_details"]}
    if message.reasoning:
        return {str(state.get("reasoning_field") or "reasoning_content"): message.reasoning}
    return {}


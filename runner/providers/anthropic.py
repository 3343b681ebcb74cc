"""Anthropic Messages, streamed.

Request, stable parts first: the tools (converted to `input_schema`), the system prompt (the
scenario's prompt and documents) as one text block, the method's context as a second block, then the
task and the conversation. Cache breakpoints (`cache_control`), four at most, the provider's limit:
- the last tool: tools come first in Anthropic's cache prefix, so they stay cached whatever follows;
- the system block: tools + system prompt, the same for every episode of a scenario;
- the method's context block, whenever there is one: the prefix up to it is shared by a stream's
  episodes until the method learns again (a context that differs per task, as rag's, costs nothing
  more for its mark: the provider bills a prompt's tokens once, as read, written or fresh);
- the last block of the latest turn (rolling): each turn writes the conversation so far and the next
  reads it back (the provider looks 20 blocks back from a mark for the longest cached prefix, and a
  turn adds two), so from the second turn on the conversation is billed at the cache-read rate.
Every mark of a request carries its stream's TTL (runner.providers.prompt_cache.StreamCadence): the
default 5 minutes, or `"ttl": "1h"` once the stream's requests come more than 4 minutes apart; one TTL
per request keeps the provider's rule that longer TTLs come first. The response records it.

Assistant turns are content blocks: the turn's thinking blocks exactly as received (their
signatures are verified on the way back), then text, then `tool_use`. Consecutive tool results (and a
user message after them) merge into one user message of `tool_result` blocks. Auth is `x-api-key`,
with an `anthropic-version` header.

Usage: `input_tokens` counts every prompt token, i.e. Anthropic's uncached `input_tokens` plus
`cache_read_input_tokens` (our cached input) plus `cache_creation_input_tokens` (our cache writes), of
which `cache_creation.ephemeral_1h_input_tokens` are 1-hour writes (priced at `cache_write_1h`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx
import orjson

from runner.providers.batch_http import BatchTarget
from runner.providers.breaker import CircuitBreaker
from runner.providers.endpoint import Endpoint, ExtraBody, estimate_tokens, merge_extra, model_response
from runner.providers.failures import AttemptFailed, parse_json_object, stream_error
from runner.providers.ledger import request_key
from runner.providers.pool import PooledEndpoint, Router, pooled
from runner.providers.prompt_cache import FIVE_MINUTES, CacheTtl, StreamCadence
from runner.providers.ratelimit import RateLimiter
from runner.providers.retry import Attempt, Retrier
from runner.providers.secret import HeaderAuth, Secret
from runner.providers.server_queue import ServerQueue
from runner.providers.sse import body_lines, drain, iter_sse
from runner.providers.taxonomy import Failure
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import JSON, AssistantTurn, Message, ToolCall

__all__ = ["ANTHROPIC_VERSION", "MAX_BREAKPOINTS", "AnthropicClient", "anthropic_messages", "anthropic_tools",
           "anthropic_usage", "cache_mark", "mark_latest_turn", "parse_message"]

ANTHROPIC_VERSION = "2023-06-01"
STATE_KEY = "anthropic"
MAX_BREAKPOINTS = 4
"""The provider's limit of `cache_control` marks per request (a fifth is refused with a 400)."""
_MIN_THINKING_BUDGET = 1024
_THINKING_TYPES = ("thinking", "redacted_thinking")


class AnthropicClient:
    def __init__(
        self,
        model: str,
        *,
        api_key: str | Secret,
        http: httpx.AsyncClient,
        base_url: str = "https://api.anthropic.com",
        name: str | None = None,
        retrier: Retrier | None = None,
        limiter: RateLimiter | None = None,
        breaker: CircuitBreaker | None = None,
        queue: ServerQueue | None = None,
        router: Router | None = None,
        thinking_budget: int | None = None,
        version: str = ANTHROPIC_VERSION,
        extra_body: Mapping[str, JSON] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        wall_clock: Callable[[], float] = time.time,
        cadence: StreamCadence | None = None,
        temperature: float | None = None,
    ) -> None:
        """`thinking_budget`: enables extended thinking with that many tokens (at least 1024, and
        always below the call's max output tokens). `extra_headers`: e.g. `anthropic-beta`. `router`: an
        endpoint pool (`runner.providers.pool`), whose replicas' limiters and breakers replace `limiter` and
        `breaker`. `cadence`: chooses each stream's cache TTL (a fixed one from the endpoint's `cache_ttl`).
        `temperature`: sent on every call when set (0 to 1), never otherwise."""
        secret = api_key if isinstance(api_key, Secret) else Secret(api_key)
        self.model = model
        self._name = name or model
        self._retrier = retrier or Retrier()
        self._thinking_budget = thinking_budget
        self._temperature = temperature
        self._extra_body = ExtraBody.parse(extra_body)
        self._cadence = cadence or StreamCadence()
        headers = {"content-type": "application/json", "anthropic-version": version, **(extra_headers or {})}

        def endpoint(base: str, key: Secret, limits: RateLimiter, breaks: CircuitBreaker, queued: ServerQueue
                     ) -> Endpoint:
            return Endpoint(url=base.rstrip("/") + "/v1/messages", http=http, secret=key,
                            auth=HeaderAuth("x-api-key", key), limiter=limits, breaker=breaks, headers=headers,
                            wall_clock=wall_clock, queue=queued)

        self._endpoint: Endpoint | PooledEndpoint = (
            endpoint(base_url, secret, limiter or RateLimiter(), breaker or CircuitBreaker(), queue or ServerQueue())
            if router is None
            else pooled(router, lambda r: endpoint(r.base_url, r.secret or secret, r.limiter, r.breaker, r.queue)))

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"AnthropicClient({self.model!r}, url={self._endpoint.url!r})"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        ttl = self._cadence.ttl(request.cache_scope)
        body = self.body(request, ttl)
        payload = orjson.dumps(body)
        reserve = estimate_tokens(payload, request.max_output_tokens)
        outcome = await self._retrier.call(
            lambda attempt: self._endpoint.send(payload, reserve, attempt, self._read_stream),
            key=request_key(self._endpoint.url, payload))
        marked = b'"cache_control"' in payload  # the body as sent: a TTL is recorded only when one was asked
        return dataclasses.replace(model_response(outcome), cache_ttl=ttl if marked else "")

    @property
    def fixed_cache_ttl(self) -> CacheTtl | None:
        """The endpoint's `cache_ttl` when it fixes one; None for "auto" (measured per stream)."""
        return self._cadence.fixed

    def batch_target(self) -> BatchTarget:
        """Where this endpoint's Message Batches are (`runner.providers.batch_anthropic`): the same
        connections, key, headers and retries. A pool's first replica: a batch lives where it was made."""
        endpoint = self._endpoint.endpoints[0] if isinstance(self._endpoint, PooledEndpoint) else self._endpoint
        return BatchTarget(endpoint.url.removesuffix("/v1/messages"), endpoint.http, endpoint.secret,
                           endpoint.auth, self._retrier, endpoint.headers, endpoint.wall_clock)

    def body(self, request: ModelRequest, ttl: CacheTtl = FIVE_MINUTES) -> dict[str, JSON]:
        """The request body, stable parts first (the provider reads its cache in the order tools, system,
        messages; the JSON keys follow it so the bytes share their prefix too)."""
        mark = cache_mark(ttl)
        body: dict[str, JSON] = {"model": self.model}
        if request.tools:
            body["tools"] = anthropic_tools(request.tools, mark)
        system = _system_blocks(request, mark)
        if system:
            body["system"] = system
        body["messages"] = mark_latest_turn(anthropic_messages(request.messages), mark)
        body["max_tokens"] = request.max_output_tokens
        body["stream"] = True
        if request.tools:
            # One call per turn is the protocol; allowed alongside extended thinking (only `auto` is).
            body["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
        if self._temperature is not None:
            body["temperature"] = self._temperature
        thinking = self._thinking(request.max_output_tokens)
        if thinking is not None:
            body["thinking"] = thinking
        merge_extra(body, self._extra_body.for_purpose(request.purpose))
        if not request.tools:
            body.pop("tool_choice", None)  # the API rejects tool_choice without tools
        return body

    def _thinking(self, max_tokens: int) -> dict[str, JSON] | None:
        if self._thinking_budget is None:
            return None
        budget = min(self._thinking_budget, max_tokens - 1)
        if budget < _MIN_THINKING_BUDGET:
            return None  # too little room left to think: the API would reject the request
        return {"type": "enabled", "budget_tokens": budget}

    async def _read_stream(self, response: httpx.Response, attempt: Attempt) -> AssistantTurn:
        parts = _Assembly()
        events = iter_sse(body_lines(response, attempt.heard))
        async for event in events:
            data = parse_json_object(event.data)
            kind = data.get("type", event.event)
            if kind == "error":
                raise stream_error(data, self._endpoint.secret)
            parts.add(kind, data)
            if kind == "message_start" and isinstance((data.get("message") or {}).get("model"), str):
                attempt.served_model = data["message"]["model"]
            if parts.usage_fields:
                attempt.usage = anthropic_usage(parts.usage_fields)
            if parts.stopped:
                break
        if not parts.stopped:
            raise AttemptFailed(Failure.MALFORMED, "stream ended before message_stop")
        await drain(events)
        return parts.turn()


def cache_mark(ttl: CacheTtl = FIVE_MINUTES) -> dict[str, JSON]:
    """A `cache_control` value: the 5-minute default names no TTL (the documented short form)."""
    return {"type": "ephemeral"} if ttl == FIVE_MINUTES else {"type": "ephemeral", "ttl": ttl}


def _system_blocks(request: ModelRequest, mark: Mapping[str, JSON]) -> list[dict[str, JSON]]:
    """The system prompt, then the method's context, each its own marked block."""
    texts = [request.system, request.context.strip()]
    return [{"type": "text", "text": text, "cache_control": dict(mark)} for text in texts if text]


def anthropic_tools(tools: Iterable[Mapping[str, JSON]], mark: Mapping[str, JSON] | None = None
                    ) -> list[dict[str, JSON]]:
    """OpenAI function-format tools as Anthropic tools; the last one ends the cached tools prefix."""
    converted: list[dict[str, JSON]] = []
    for tool in tools:
        function = tool.get("function", tool)
        entry: dict[str, JSON] = {
            "name": function["name"],
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        }
        if function.get("description"):
            entry["description"] = function["description"]
        converted.append(entry)
    if converted:
        converted[-1]["cache_control"] = dict(mark or cache_mark())
    return converted


def anthropic_messages(messages: Iterable[Message]) -> list[dict[str, JSON]]:
    out: list[dict[str, JSON]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # tool results of one turn (and what follows) share a message
        else:
            out.append({"role": role, "content": blocks})
    return out


def mark_latest_turn(messages: list[dict[str, JSON]], mark: Mapping[str, JSON] | None = None
                     ) -> list[dict[str, JSON]]:
    """The rolling cache breakpoint: `cache_control` on the last block of the last message, unless that
    block is thinking (which cannot carry a mark; the turn is then read from the previous mark)."""
    if messages and messages[-1]["content"]:
        last = messages[-1]["content"][-1]
        if last.get("type") not in _THINKING_TYPES:
            last["cache_control"] = dict(mark or cache_mark())
    return messages


def anthropic_usage(fields: Mapping[str, Any]) -> Usage:
    uncached = int(fields.get("input_tokens") or 0)
    read = int(fields.get("cache_read_input_tokens") or 0)
    written = int(fields.get("cache_creation_input_tokens") or 0)
    by_ttl = fields.get("cache_creation")
    one_hour = int(by_ttl.get("ephemeral_1h_input_tokens") or 0) if isinstance(by_ttl, Mapping) else 0
    return Usage(input_tokens=uncached + read + written, cached_input_tokens=read, cache_write_tokens=written,
                 output_tokens=int(fields.get("output_tokens") or 0), cache_write_1h_tokens=min(one_hour, written))


def _blocks(message: Message) -> list[dict[str, JSON]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}]
    if message.role == "user":
        return [{"type": "text", "text": message.content}]
    blocks = _thinking_blocks(message.provider_state)
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c)}
                  for c in message.tool_calls)
    if not blocks:
        # The API refuses an empty assistant message; the turn said nothing, and this says so.
        blocks.append({"type": "text", "text": "(no response)"})
    return blocks


def _thinking_blocks(provider_state: JSON) -> list[dict[str, JSON]]:
    state = provider_state.get(STATE_KEY) if isinstance(provider_state, dict) else None
    thinking = state.get("thinking") if isinstance(state, dict) else None
    return [dict(block) for block in thinking] if isinstance(thinking, list) else []


def _tool_input(call: ToolCall) -> JSON:
    # `input` must be an object. Arguments that did not parse were answered "not executed" by the
    # runner; they go back as {} because the API has no way to carry malformed JSON.
    try:
        parsed = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def parse_message(data: Mapping[str, Any]) -> tuple[AssistantTurn, Usage, str]:
    """A whole Message (a batch's succeeded result): its turn, usage and the model that served it, read
    into the same assembly the stream fills, so a tool call's arguments, the thinking blocks kept for the
    way back and the usage come out as a streamed reply's do."""
    parts = _Assembly()
    for index, block in enumerate(data.get("content") or ()):
        whole = dict(block)
        if whole.get("type") == "tool_use":  # the stream's pieces of input JSON, here whole
            whole["partial_json"] = orjson.dumps(whole.get("input") or {}).decode()
        parts.blocks[index] = whole
    model = data.get("model")
    return parts.turn(), anthropic_usage(data.get("usage") or {}), model if isinstance(model, str) else ""


class _Assembly:
    """Content blocks put together from stream events, by index."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage_fields: dict[str, Any] = {}
        self.stopped = False

    def add(self, kind: str, data: Mapping[str, Any]) -> None:
        if kind == "message_start":
            self.usage_fields.update((data.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            block = dict(data.get("content_block") or {})
            if block.get("type") == "tool_use":
                block["partial_json"] = ""  # the streamed input arrives as JSON text in pieces
            self.blocks[int(data.get("index", len(self.blocks)))] = block
        elif kind == "content_block_delta":
            self._add_delta(int(data.get("index", 0)), data.get("delta") or {})
        elif kind == "message_delta":
            # Counts in message_delta are cumulative: they replace what message_start said.
            self.usage_fields.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True

    def turn(self) -> AssistantTurn:
        ordered = [self.blocks[i] for i in sorted(self.blocks)]
        thinking = [_thinking_block(b) for b in ordered if b.get("type") in _THINKING_TYPES]
        calls = tuple(ToolCall(b.get("id", ""), b.get("name", ""), b["partial_json"] or "{}")
                      for b in ordered if b.get("type") == "tool_use")
        return AssistantTurn(
            text="".join(b.get("text", "") for b in ordered if b.get("type") == "text"),
            reasoning="".join(b.get("thinking", "") for b in ordered if b.get("type") == "thinking"),
            tool_calls=calls,
            provider_state={STATE_KEY: {"thinking": thinking}} if thinking else None,
        )

    def _add_delta(self, index: int, delta: Mapping[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")
        elif kind == "input_json_delta":
            block["partial_json"] = block.get("partial_json", "") + delta.get("partial_json", "")


def _thinking_block(block: Mapping[str, Any]) -> dict[str, JSON]:
    if block.get("type") == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data", "")}
    return {"type": "thinking", "thinking": block.get("thinking", ""), "signature": block.get("signature", "")}


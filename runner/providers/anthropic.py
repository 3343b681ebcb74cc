"""Anthropic Messages, streamed.

Request: the system prompt as one text block and the tools (converted to `input_schema`) marked
`cache_control: ephemeral` at their ends. Tools come first in Anthropic's cache prefix, so the mark on
the last tool caches them even when a method changes the system prompt, and the mark on the system
block caches tools + system while it stays the same. A third, rolling mark sits on the last block of
the latest turn: each turn writes the conversation so far to the cache and the next turn reads it back
(the provider looks 20 blocks back from a mark for the longest cached prefix, and a turn adds two),
so from the second turn on the conversation is billed at the cache-read rate. Three marks stay within
the provider's limit of four. Assistant turns are content blocks: the
turn's thinking blocks exactly as received (their signatures are verified on the way back), then
text, then `tool_use`. Consecutive tool results (and a user message after them) merge into one user
message of `tool_result` blocks. Auth is `x-api-key`, with an `anthropic-version` header.

Usage: `input_tokens` counts every prompt token, i.e. Anthropic's uncached `input_tokens` plus
`cache_read_input_tokens` (our cached input) plus `cache_creation_input_tokens` (our cache writes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx
import orjson

from runner.providers.breaker import CircuitBreaker
from runner.providers.endpoint import Endpoint, ExtraBody, estimate_tokens, merge_extra, model_response
from runner.providers.failures import AttemptFailed, parse_json_object, stream_error
from runner.providers.ledger import request_key
from runner.providers.pool import PooledEndpoint, Router, pooled
from runner.providers.ratelimit import RateLimiter
from runner.providers.retry import Attempt, Retrier
from runner.providers.secret import HeaderAuth, Secret
from runner.providers.sse import drain, iter_sse
from runner.providers.taxonomy import Failure
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import JSON, AssistantTurn, Message, ToolCall

__all__ = ["ANTHROPIC_VERSION", "AnthropicClient", "anthropic_messages", "anthropic_tools", "anthropic_usage",
           "mark_latest_turn"]

ANTHROPIC_VERSION = "2023-06-01"
STATE_KEY = "anthropic"
_EPHEMERAL: dict[str, JSON] = {"type": "ephemeral"}
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
        router: Router | None = None,
        thinking_budget: int | None = None,
        version: str = ANTHROPIC_VERSION,
        extra_body: Mapping[str, JSON] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """`thinking_budget`: enables extended thinking with that many tokens (at least 1024, and
        always below the call's max output tokens). `extra_headers`: e.g. `anthropic-beta`. `router`: an
        endpoint pool (`runner.providers.pool`), whose replicas' limiters and breakers replace `limiter` and
        `breaker`."""
        secret = api_key if isinstance(api_key, Secret) else Secret(api_key)
        self.model = model
        self._name = name or model
        self._retrier = retrier or Retrier()
        self._thinking_budget = thinking_budget
        self._extra_body = ExtraBody.parse(extra_body)
        headers = {"content-type": "application/json", "anthropic-version": version, **(extra_headers or {})}

        def endpoint(base: str, key: Secret, limits: RateLimiter, breaks: CircuitBreaker) -> Endpoint:
            return Endpoint(url=base.rstrip("/") + "/v1/messages", http=http, secret=key,
                            auth=HeaderAuth("x-api-key", key), limiter=limits, breaker=breaks, headers=headers,
                            wall_clock=wall_clock)

        self._endpoint: Endpoint | PooledEndpoint = (
            endpoint(base_url, secret, limiter or RateLimiter(), breaker or CircuitBreaker()) if router is None
            else pooled(router, lambda r: endpoint(r.base_url, r.secret or secret, r.limiter, r.breaker)))

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"AnthropicClient({self.model!r}, url={self._endpoint.url!r})"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        payload = orjson.dumps(self.body(request))
        reserve = estimate_tokens(payload, request.max_output_tokens)
        outcome = await self._retrier.call(
            lambda attempt: self._endpoint.send(payload, reserve, attempt, self._read_stream),
            key=request_key(self._endpoint.url, payload))
        return model_response(outcome)

    def body(self, request: ModelRequest) -> dict[str, JSON]:
        body: dict[str, JSON] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "messages": mark_latest_turn(anthropic_messages(request.messages)),
            "stream": True,
        }
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
        if request.tools:
            body["tools"] = anthropic_tools(request.tools)
            # One call per turn is the protocol; allowed alongside extended thinking (only `auto` is).
            body["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
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
        events = iter_sse(response.aiter_lines())
        async for event in events:
            data = parse_json_object(event.data)
            kind = data.get("type", event.event)
            if kind == "error":
                raise stream_error(data, self._endpoint.secret)
            parts.add(kind, data)
            if parts.usage_fields:
                attempt.usage = anthropic_usage(parts.usage_fields)
            if parts.stopped:
                break
        if not parts.stopped:
            raise AttemptFailed(Failure.MALFORMED, "stream ended before message_stop")
        await drain(events)
        return parts.turn()


def anthropic_tools(tools: Iterable[Mapping[str, JSON]]) -> list[dict[str, JSON]]:
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
        converted[-1]["cache_control"] = _EPHEMERAL
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


def mark_latest_turn(messages: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """The rolling cache breakpoint: `cache_control` on the last block of the last message, unless that
    block is thinking (which cannot carry a mark; the turn is then read from the previous mark)."""
    if messages and messages[-1]["content"]:
        last = messages[-1]["content"][-1]
        if last.get("type") not in _THINKING_TYPES:
            last["cache_control"] = _EPHEMERAL
    return messages


def anthropic_usage(fields: Mapping[str, Any]) -> Usage:
    uncached = int(fields.get("input_tokens") or 0)
    read = int(fields.get("cache_read_input_tokens") or 0)
    written = int(fields.get("cache_creation_input_tokens") or 0)
    return Usage(input_tokens=uncached + read + written, cached_input_tokens=read, cache_write_tokens=written,
                 output_tokens=int(fields.get("output_tokens") or 0))


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


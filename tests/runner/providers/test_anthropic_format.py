"""Anthropic Messages requests as documented, checked on the recorded bodies: cache_control on the
unchanging prefix only, tools with input_schema, thinking blocks passed back with their signatures,
tool results merged into one user message; usage with cache reads and writes."""

from __future__ import annotations

from typing import Any

from bench.mock_provider import Call, MockUsage, Reply, serve_mock
from runner.providers import make_http_client
from runner.providers.anthropic import ANTHROPIC_VERSION, anthropic_messages
from simulators.model_api import ModelRequest
from simulators.protocol import Message, ToolCall
from tests.runner.providers.support import (
    KEY,
    anthropic_client,
    continue_after,
    conversation_after_one_call,
    request,
)

EPHEMERAL = {"type": "ephemeral"}


def _cache_marks(value: Any, path: str = "") -> list[str]:
    """Where in the body `cache_control` appears."""
    if isinstance(value, dict):
        here = [path] if "cache_control" in value else []
        return here + [m for k, v in value.items() for m in _cache_marks(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [m for i, v in enumerate(value) for m in _cache_marks(v, f"{path}[{i}]")]
    return []


async def test_headers_system_tools_and_cache_control_placement() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        await anthropic_client(mock.base_url, http).respond(request(*conversation_after_one_call()))
    sent = mock.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY and "authorization" not in sent.headers
    assert sent.headers["anthropic-version"] == ANTHROPIC_VERSION
    body = sent.body
    assert body["system"] == [{"type": "text", "text": "You are a clerk.", "cache_control": EPHEMERAL}]
    assert body["tools"][0] == {"name": "lookup", "description": "Look a thing up.",
                                "input_schema": {"type": "object", "properties": {"q": {"type": "string"}},
                                                 "required": ["q"]}}
    assert body["tools"][1]["cache_control"] == EPHEMERAL
    # The unchanging prefix (last tool, system prompt) and the rolling mark on the latest turn's last block.
    assert sorted(_cache_marks(body)) == [".messages[2].content[0]", ".system[0]", ".tools[1]"]
    assert body["max_tokens"] == 2048 and body["stream"] is True
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert "thinking" not in body


async def test_thinking_blocks_go_back_with_their_signatures_before_text_and_tool_use() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        client = anthropic_client(mock.base_url, http, thinking_budget=1500)
        mock.script(Reply(reasoning="The customer wants a refund.", signature="EqQBCkgIARABGAIiQ",
                          text="Checking.", tool_calls=(Call("lookup", {"q": "order 7"}, id="toolu_1"),)))
        first = await client.respond(request())
        await client.respond(request(*continue_after(first.turn)))
    assert mock.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 1500}
    assert first.turn.reasoning == "The customer wants a refund."
    assert first.turn.tool_calls == (ToolCall("toolu_1", "lookup", '{"q":"order 7"}'),)
    user, assistant, results = mock.requests[1].body["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "Refund order 7."}]}
    assert assistant == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "The customer wants a refund.", "signature": "EqQBCkgIARABGAIiQ"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "order 7"}},
    ]}
    assert results == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "order 7: shipped", "cache_control": EPHEMERAL}]}


def test_redacted_thinking_is_passed_back_untouched() -> None:
    state = {"anthropic": {"thinking": [{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}]}}
    messages = conversation_after_one_call(state)
    assistant = anthropic_messages(messages)[1]
    assert assistant["content"][0] == {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}


def test_consecutive_tool_results_and_a_following_user_message_share_one_user_message() -> None:
    calls = (ToolCall("t1", "lookup", '{"q": "a"}'), ToolCall("t2", "lookup", "{not json"))
    messages = (
        Message("user", "Go."),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "not executed: one call per turn", tool_call_id="t1"),
        Message("tool", "not executed: one call per turn", tool_call_id="t2"),
        Message("user", "Make exactly one call."),
    )
    converted = anthropic_messages(messages)
    assert [m["role"] for m in converted] == ["user", "assistant", "user"]
    assert [b["type"] for b in converted[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert [b.get("tool_use_id") for b in converted[2]["content"][:2]] == ["t1", "t2"]
    # Malformed arguments cannot be carried by `input` (an object); they go back as {}.
    assert [b["input"] for b in converted[1]["content"]] == [{"q": "a"}, {}]


async def test_a_thinking_budget_is_kept_below_max_tokens_or_dropped() -> None:
    async with make_http_client() as http:
        client = anthropic_client("http://127.0.0.1:9", http, thinking_budget=4000)
        assert client.body(request())["thinking"] == {"type": "enabled", "budget_tokens": 2047}
        tiny = ModelRequest(system="s", messages=(Message("user", "hi"),), max_output_tokens=1000)
        assert "thinking" not in client.body(tiny)


async def test_usage_counts_cache_reads_and_writes() -> None:
    usage = MockUsage(input_tokens=5000, output_tokens=120, cached_tokens=3000, cache_write_tokens=1500)
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Reply(text="ok", usage=usage))
        response = await anthropic_client(mock.base_url, http).respond(request())
    assert response.usage.input_tokens == 5000  # uncached 500 + read 3000 + written 1500
    assert response.usage.cached_input_tokens == 3000
    assert response.usage.cache_write_tokens == 1500
    assert response.usage.output_tokens == 120
    assert response.usage.reported_cost_usd is None

"""The loopback mock itself: generic tool-calling episodes in both dialects, plain JSON answers,
keep-alive, and the schema-driven arguments it makes up."""

from __future__ import annotations

import httpx
import pytest

from bench.mock_provider import Failure, MockUsage, Reply, minimal_value, serve_mock, tool_loop
from runner.providers import make_http_client
from simulators.model_api import ModelClient
from simulators.protocol import Message
from tests.runner.providers.support import anthropic_client, openai_client, request


async def _run_to_finish(client: ModelClient, turns: int = 10) -> list[str]:
    """A bare agent loop: execute nothing, answer every call, stop at `finish`."""
    messages = [Message("user", "Refund order 7.")]
    called: list[str] = []
    for _ in range(turns):
        turn = (await client.respond(request(*messages))).turn
        messages.append(Message("assistant", turn.text, reasoning=turn.reasoning, tool_calls=turn.tool_calls,
                                provider_state=turn.provider_state))
        for call in turn.tool_calls:
            called.append(call.name)
            messages.append(Message("tool", f"ran {call.name}", tool_call_id=call.id))
        if "finish" in called:
            break
    return called


@pytest.mark.parametrize("make", [openai_client, anthropic_client])
async def test_tool_loop_answers_a_whole_episode_in_either_dialect(make: object) -> None:
    async with serve_mock(tool_loop(calls_before_finish=3)) as mock, make_http_client() as http:
        called = await _run_to_finish(make(mock.base_url, http))  # type: ignore[operator]
    assert called == ["lookup", "lookup", "lookup", "finish"]
    assert len(mock.requests) == 4
    assert mock.connections < len(mock.requests)  # keep-alive: connections are reused


async def test_plain_json_answers_and_failures_over_raw_http() -> None:
    async with serve_mock() as mock, httpx.AsyncClient(base_url=mock.base_url) as http:
        mock.script(Reply(text="hi", usage=MockUsage(10, 3)), Failure(503, message="busy", retry_after="2"))
        anthropic = await http.post("/v1/messages", json={"model": "c", "messages": [], "stream": False})
        assert anthropic.json()["content"] == [{"type": "text", "text": "hi"}]
        assert anthropic.json()["usage"]["output_tokens"] == 3
        failed = await http.post("/v1/chat/completions", json={"model": "m", "messages": []})
        assert failed.status_code == 503 and failed.headers["retry-after"] == "2"
        assert failed.json()["error"]["message"] == "busy"
        text = await http.post("/v1/chat/completions", json={"model": "m", "messages": []})
        assert text.json()["choices"][0]["message"]["content"] == "ok"  # tool_loop without tools
    assert [r.dialect for r in mock.requests] == ["anthropic", "openai", "openai"]


def test_minimal_values_satisfy_the_schema_shapes() -> None:
    schema = {"type": "object", "required": ["answer", "decision", "n", "legs", "maybe"],
              "properties": {"answer": {"type": "string"}, "decision": {"enum": ["refuse"]},
                             "n": {"type": "integer", "minimum": 3}, "legs": {"type": "array", "minItems": 1,
                                                                             "items": {"type": "number"}},
                             "maybe": {"type": ["null", "boolean"]}, "reason": {"type": "string"}}}
    assert minimal_value(schema) == {"answer": "x", "decision": "refuse", "n": 3, "legs": [0], "maybe": False}


@pytest.mark.parametrize("dialect", ["openai-stream", "openai-json", "anthropic"])
async def test_the_version_a_reply_names_comes_back_as_served_model(dialect: str) -> None:
    dated = Reply(text="ok", served_model="test-2026-06-01")
    async with serve_mock(lambda _request: dated) as mock, make_http_client() as http:
        client: ModelClient = (anthropic_client(mock.base_url, http) if dialect == "anthropic"
                               else openai_client(mock.base_url, http, stream=dialect == "openai-stream"))
        assert (await client.respond(request(Message(role="user", content="hi")))).served_model == "test-2026-06-01"
    async with serve_mock(lambda _request: Reply(text="ok")) as mock, make_http_client() as http:
        plain = openai_client(mock.base_url, http)
        assert (await plain.respond(request(Message(role="user", content="hi")))).served_model == "gpt-test"

"""OpenAI-compatible requests as the documented format has them, checked on the bodies the server
recorded; responses (streamed and not) parsed into turns with reasoning and usage."""

from __future__ import annotations

from bench.mock_provider import Call, MockUsage, Reply, serve_mock
from runner.providers import make_http_client
from tests.runner.providers.support import (
    KEY,
    TOOLS,
    continue_after,
    conversation_after_one_call,
    openai_client,
    request,
)

OPENROUTER_DETAILS = (
    {"type": "reasoning.text", "text": "The order shipped, so", "signature": "sig-or-1",
     "format": "anthropic-claude-v1"},
)


async def test_the_request_body_has_the_documented_shape() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        await openai_client(mock.base_url, http).respond(request())
    sent = mock.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = sent.body
    assert body["model"] == "gpt-test"
    assert body["messages"] == [{"role": "system", "content": "You are a clerk."},
                                {"role": "user", "content": "Refund order 7."}]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["parallel_tool_calls"] is False
    assert body["tools"] == list(TOOLS)
    assert body["max_tokens"] == 2048


async def test_tool_calls_and_results_go_back_in_the_documented_format() -> None:
    state = {"openai_compat": {"reasoning_field": "reasoning_content"}}
    messages = conversation_after_one_call(state, reasoning="Need the order first.")
    async with serve_mock() as mock, make_http_client() as http:
        await openai_client(mock.base_url, http).respond(request(*messages))
    _system, _user, assistant, tool = mock.requests[0].body["messages"]
    assert assistant == {
        "role": "assistant", "content": "Let me look.",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "order 7"}'}}],
        "reasoning_content": "Need the order first.",
    }
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": "order 7: shipped"}


async def test_streamed_reasoning_is_read_and_passed_back_under_its_own_field() -> None:
    for field in ("reasoning_content", "reasoning"):
        async with serve_mock() as mock, make_http_client() as http:
            client = openai_client(mock.base_url, http)
            mock.script(Reply(reasoning="Check the order.", reasoning_field=field,
                              tool_calls=(Call("lookup", {"q": "7"}, id="call_9"),)))
            first = await client.respond(request())
            assert first.turn.reasoning == "Check the order."
            assert first.turn.tool_calls[0].arguments == '{"q":"7"}'
            await client.respond(request(*continue_after(first.turn)))
        assistant = mock.requests[1].body["messages"][2]
        assert assistant[field] == "Check the order."
        assert assistant["content"] == ""  # never null: llama-cpp-python rejects it
        assert set(assistant) == {"role", "content", "tool_calls", field}


async def test_openrouter_reasoning_details_are_merged_and_passed_back_verbatim() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http)
        mock.script(Reply(reasoning="The order shipped, so", reasoning_field="reasoning",
                          reasoning_details=OPENROUTER_DETAILS, tool_calls=(Call("lookup", {"q": "7"}),)))
        first = await client.respond(request())
        await client.respond(request(*continue_after(first.turn)))
    assistant = mock.requests[1].body["messages"][2]
    assert assistant["reasoning_details"] == [{**OPENROUTER_DETAILS[0], "index": 0}]
    assert "reasoning" not in assistant  # the details carry it; sending both would duplicate it


async def test_echo_reasoning_off_keeps_reasoning_out_of_the_history() -> None:
    messages = conversation_after_one_call({"openai_compat": {"reasoning_field": "reasoning"}}, reasoning="r")
    async with serve_mock() as mock, make_http_client() as http:
        await openai_client(mock.base_url, http, echo_reasoning=False).respond(request(*messages))
    assistant = mock.requests[0].body["messages"][2]
    assert "reasoning" not in assistant and "reasoning_content" not in assistant


async def test_usage_with_cached_tokens_and_reported_cost() -> None:
    usage = MockUsage(input_tokens=1200, output_tokens=80, cached_tokens=1024, cache_write_tokens=0, cost_usd=0.0042)
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Reply(text="hi", usage=usage))
        response = await openai_client(mock.base_url, http).respond(request())
    assert response.usage.input_tokens == 1200
    assert response.usage.cached_input_tokens == 1024
    assert response.usage.output_tokens == 80
    assert response.usage.reported_cost_usd == 0.0042 and response.cost_usd == 0.0042
    assert response.attempts == 1


async def test_without_a_reported_cost_the_call_is_left_for_the_caller_to_price() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Reply(text="hi", usage=MockUsage(10, 2)))
        response = await openai_client(mock.base_url, http).respond(request())
    assert response.usage.reported_cost_usd is None and response.cost_usd == 0.0


async def test_non_streaming_mode() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Reply(text="ok", reasoning="thought", reasoning_field="reasoning",
                          tool_calls=(Call("finish", {"answer": "7"}, id="call_3"),),
                          usage=MockUsage(300, 12, cached_tokens=100)))
        client = openai_client(mock.base_url, http, stream=False, max_tokens_field="max_completion_tokens",
                               extra_body={"temperature": 0})
        response = await client.respond(request())
    body = mock.requests[0].body
    assert body["stream"] is False and "stream_options" not in body
    assert body["max_completion_tokens"] == 2048 and "max_tokens" not in body
    assert body["temperature"] == 0
    turn = response.turn
    assert (turn.text, turn.reasoning) == ("ok", "thought")
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [("call_3", "finish", '{"answer":"7"}')]
    assert turn.provider_state == {"openai_compat": {"reasoning_field": "reasoning"}}
    assert (response.usage.input_tokens, response.usage.cached_input_tokens) == (300, 100)



async def test_extra_body_adds_fields_and_none_removes_them() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        extra = {"parallel_tool_calls": None, "reasoning": {"effort": "low"}}
        await openai_client(mock.base_url, http, extra_body=extra).respond(request())
    body = mock.requests[0].body
    assert "parallel_tool_calls" not in body and body["reasoning"] == {"effort": "low"}

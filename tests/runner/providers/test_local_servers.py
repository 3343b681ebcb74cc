"""What local OpenAI-compatible servers (llama.cpp, llama-cpp-python) need from the client, against the
mock in their modes: a string `content` beside tool calls, usage estimated (never 0) when none comes,
`extra_body` scoped by call purpose, and no stall timeout on a non-streamed call."""

from __future__ import annotations

import pytest

from bench.mock_provider import Reply, serve_mock
from bench.mock_quirks import MODES, with_quirks
from runner.config.prices import Price
from runner.cost.budget import Budget
from runner.cost.pricing import worst_case_usd
from runner.models.priced import PricedModel
from runner.models.registry import build_model
from runner.providers import HttpSettings, make_http_client
from runner.providers.taxonomy import Failure, InfrastructureError
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn, Message, ToolCall
from tests.runner.providers.support import TOOLS, continue_after, openai_client, request

PRICE = Price(input=1.0, cached_input=0.5, cache_write=1.0, output=2.0)


async def test_an_assistant_turn_with_only_a_tool_call_is_accepted_by_llama_cpp_python() -> None:
    silent_call = AssistantTurn(tool_calls=(ToolCall("call_1", "lookup", '{"q": "7"}'),))
    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, stream=False)
        response = await client.respond(request(*continue_after(silent_call)))
    assert response.attempts == 1
    assert mock.requests[0].body["messages"][2]["content"] == ""


async def test_a_call_cut_inside_its_arguments_goes_back_as_an_empty_object_llama_cpp_accepts() -> None:
    # A reply cut at max_tokens inside a call leaves arguments that are not JSON; the runner answered the
    # call "not executed". llama.cpp parses the history's arguments before rendering and refused the
    # whole request with a 500 (seen on the real server, bench/local_server.py).
    cut = AssistantTurn(tool_calls=(ToolCall("call_1", "lookup", '{"q": "7 and then some more wor'),))
    whole = AssistantTurn(tool_calls=(ToolCall("call_2", "lookup", '{"q":  "7"}'),))
    async with serve_mock(with_quirks(MODES["llama.cpp"])) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, stream=False)
        response = await client.respond(request(*continue_after(cut, "not executed: arguments are not JSON")))
        await client.respond(request(*continue_after(whole)))
    assert response.attempts == 1
    cut_sent, whole_sent = (r.body["messages"][2]["tool_calls"][0]["function"] for r in mock.requests)
    assert cut_sent == {"name": "lookup", "arguments": "{}"}
    assert whole_sent["arguments"] == '{"q":  "7"}'  # parseable arguments go back byte for byte


async def test_llama_cpps_refusal_of_unparseable_call_arguments_is_sent_once() -> None:
    cut = AssistantTurn(tool_calls=(ToolCall("call_1", "lookup", '{"q": "7'),))
    async with serve_mock(with_quirks(MODES["llama.cpp"])) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, stream=False)
        body = client.body(request(*continue_after(cut)))
        body["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"q": "7'  # as a server would see it
        with pytest.raises(InfrastructureError) as failed:
            await client.send_body(body, 2048)
    assert failed.value.failure is Failure.REJECTED
    assert len(mock.requests) == 1


async def test_a_streamed_reply_without_usage_is_estimated_and_marked() -> None:
    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http)
        mock.script(Reply(text="Your order shipped yesterday.", stream_usage=False))
        response = await client.respond(request())
    usage = response.usage
    assert usage.estimated
    assert usage.input_tokens == -(-len(mock.requests[0].raw) // 4)
    assert usage.output_tokens == -(-len(b"Your order shipped yesterday.") // 4)


async def test_a_reported_usage_is_not_marked_estimated() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        response = await openai_client(mock.base_url, http).respond(request())
    assert not response.usage.estimated and response.usage.input_tokens > 0


async def test_an_estimated_call_costs_money_within_its_reservation() -> None:
    budget = Budget(cap_usd=1.0)
    ask = request()
    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock, make_http_client() as http:
        mock.script(Reply(text="x" * 40_000, stream_usage=False))
        priced = PricedModel(openai_client(mock.base_url, http), PRICE, budget, None)
        response = await priced.respond(ask)
    assert response.usage.estimated
    assert response.usage.output_tokens == ask.max_output_tokens  # never more than the call allowed
    assert 0 < response.cost_usd <= worst_case_usd(ask, PRICE)
    assert budget.overruns == 0 and budget.spent == response.cost_usd


async def test_extra_body_reaches_agent_calls_and_scoped_fields_only_their_purpose() -> None:
    extra = {"tool_choice": "auto", "temperature": 0.1, "method": {"temperature": 0.7}, "probe": {"seed": 1}}
    bare = Message("user", "Summarize.")
    async with serve_mock(with_quirks(MODES["strict"])) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, extra_body=extra)
        await client.respond(request())
        await client.respond(ModelRequest(system="s", messages=(bare,), purpose="method"))
        await client.respond(ModelRequest(system="s", messages=(bare,), purpose="probe"))
    agent, method, probe = (r.body for r in mock.requests)
    assert agent["tool_choice"] == "auto" and agent["temperature"] == 0.1 and "seed" not in agent
    assert "tool_choice" not in method and method["temperature"] == 0.7
    assert "tool_choice" not in probe and "temperature" not in probe and probe["seed"] == 1


async def test_tool_choice_is_never_sent_without_tools() -> None:
    async with serve_mock(with_quirks(MODES["strict"])) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, extra_body={"tool_choice": "auto"})
        judged = await client.respond(ModelRequest(system="s", messages=(Message("user", "Grade."),),
                                                   purpose="judge", tools=()))
    assert judged.attempts == 1 and "tool_choice" not in mock.requests[0].body
    assert TOOLS  # the agent's calls keep theirs (previous test)


async def test_a_non_streamed_call_waits_past_the_stall_timeout() -> None:
    # The server is silent until the whole answer is ready: silence longer than the stall timeout is
    # no stall, and giving up would only queue the retry behind the request the server keeps computing.
    settings = HttpSettings(stall_timeout_s=0.2)
    async with serve_mock() as mock, make_http_client(settings) as http:
        mock.script(Reply(text="done", delay_s=1.0))
        response = await openai_client(mock.base_url, http, stream=False).respond(request())
    assert response.attempts == 1 and len(mock.requests) == 1
    assert response.turn.text == "done"


async def test_a_streamed_call_still_has_its_stall_timeout() -> None:
    # A stall time of seconds (0.2 s once let a loaded machine cut the retry too), the silence ten times that.
    settings = HttpSettings(stall_timeout_s=2.0)
    async with serve_mock() as mock, make_http_client(settings) as http:
        mock.script(Reply(text="late", delay_s=20.0), Reply(text="on time"))
        response = await openai_client(mock.base_url, http).respond(request())
    assert response.turn.text == "on time" and response.attempts == 2


def test_a_scope_of_extra_body_that_is_not_a_table_is_one_clear_error() -> None:
    endpoints = {"local": {"kind": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:1/v1",
                           "extra_body": {"tool_choice": "auto", "method": "auto"}}}
    with pytest.raises(ShiftbenchInputError, match=r"\[endpoints.local\]: extra_body.method must be a table"):
        build_model("local", endpoints)

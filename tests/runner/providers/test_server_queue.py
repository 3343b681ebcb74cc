"""Time queued at a server is not a stalled stream (runner/providers/server_queue.py), against the mock
working on one request at a time as llama.cpp's `-np 1` does (it sends a waiting request nothing, not
even headers). Stall times are seconds and service times tenths, so a loaded machine does not decide."""

from __future__ import annotations

import anyio
import pytest

from bench.mock_provider import Reply, llama_cpp_info, serve_mock
from runner.providers import HttpSettings, RateLimiter, RateLimits, make_http_client
from runner.providers.server_info import ServerInfo, server_info
from runner.providers.server_queue import ServerQueue
from simulators.model_api import ModelResponse
from simulators.protocol import Message
from tests.runner.providers.support import fast_retrier, openai_client, request

STALL = HttpSettings(stall_timeout_s=2.0)
SERVICE_S = 0.3
CALLS = 12
"""The last ones wait 11 x 0.3 s = 3.3 s at the server, well past the 2 s stall time."""


async def _at_once(slots: int | None, calls: int = CALLS) -> tuple[list[ModelResponse], int]:
    """`calls` streamed calls at once to a one-slot server; their responses and the most it worked on."""
    responses: list[ModelResponse] = []
    async with serve_mock() as mock, make_http_client(STALL) as http:
        mock.slots = 1
        mock.script(*[Reply(text=f"answer {i}", delay_s=SERVICE_S) for i in range(3 * calls)])
        client = openai_client(mock.base_url, http, fast_retrier(), queue=ServerQueue(slots))

        async def one(order: int) -> None:  # each its own body: a body's attempts are bounded across calls
            responses.append(await client.respond(request(Message("user", f"Refund order {order}."))))

        async with anyio.create_task_group() as group:
            for order in range(calls):
                group.start_soon(one, order)
                await anyio.sleep(0.01)  # sent in order, as a run sends them
        return responses, mock.most_at_once


async def test_calls_queued_behind_a_one_slot_server_are_never_cut_as_stalled() -> None:
    responses, most = await _at_once(slots=1)
    assert most == 1
    assert [r.attempts for r in responses] == [1] * CALLS


async def test_without_the_slots_known_the_same_queue_cuts_the_calls_at_its_back() -> None:
    # What a run did before it read the server's slots: the stall timeout ran from the send.
    responses, _ = await _at_once(slots=None)
    assert len(responses) == CALLS
    assert max(r.attempts for r in responses) > 1


async def test_a_call_in_the_slot_that_goes_silent_is_still_cut_and_the_one_behind_it_is_not() -> None:
    settings = STALL  # 0.5 s once: on a loaded machine the retry's own first byte came later and it was cut too
    async with serve_mock() as mock, make_http_client(settings) as http:
        mock.slots = 1
        # The first stalls after one event and holds the slot until the client hangs up; the second waits.
        mock.script(Reply(text="first", stall_after=1), Reply(text="second"), Reply(text="first again"))
        client = openai_client(mock.base_url, http, fast_retrier(), queue=ServerQueue(1))
        responses: dict[str, ModelResponse] = {}

        async def call(name: str) -> None:
            responses[name] = await client.respond(request(Message("user", name)))

        async with anyio.create_task_group() as group:
            group.start_soon(call, "first")
            await anyio.sleep(0.05)
            group.start_soon(call, "second")
    assert responses["first"].attempts == 2 and responses["first"].turn.text == "first again"
    assert responses["second"].attempts == 1 and responses["second"].turn.text == "second"


async def test_a_call_in_a_free_slot_that_gets_no_byte_at_all_is_cut() -> None:
    # The stall time in seconds (0.3 s once let a loaded machine cut the retry as well) and the server's
    # silence ten times longer, so the bound tells a stall cut from waiting the server out.
    async with serve_mock() as mock, make_http_client(STALL) as http:
        mock.script(Reply(text="lost", delay_s=60.0), Reply(text="done"))  # the server sits on the first
        client = openai_client(mock.base_url, http, fast_retrier(), queue=ServerQueue(1))
        with anyio.fail_after(20):  # cut after the stall time, not after the server's 60 s
            response = await client.respond(request())
    assert response.attempts == 2 and response.turn.text == "done"


async def test_waiting_for_the_endpoints_own_slot_does_not_count_against_the_calls_deadline() -> None:
    # max_concurrency 1: the second call waits for the first (1.2 s) in our limiter, then takes 1.2 s
    # itself; each has 2 s.
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Reply(text="slow", delay_s=1.2), Reply(text="quick", delay_s=1.2))
        limiter = RateLimiter(RateLimits(max_concurrency=1))
        client = openai_client(mock.base_url, http, fast_retrier(deadline_s=2.0, attempt_timeout_s=3.0),
                               limiter=limiter)
        texts: list[str] = []

        async def call(text: str) -> None:
            texts.append((await client.respond(request(Message("user", text)))).turn.text)

        async with anyio.create_task_group() as group:
            group.start_soon(call, "one")
            await anyio.sleep(0.05)
            group.start_soon(call, "two")
    assert texts == ["slow", "quick"]


@pytest.mark.parametrize(("pages", "expected"), [
    (llama_cpp_info(slots=4, n_ctx=2048), ServerInfo(4, 2048, "llama.cpp /props")),
    ({"/slots": llama_cpp_info(slots=2)["/slots"]}, ServerInfo(2, 8192, "llama.cpp /slots")),
    ({}, ServerInfo()),
])
async def test_the_server_info_is_read_where_llama_cpp_publishes_it(pages: dict[str, object],
                                                                      expected: ServerInfo) -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.info = dict(pages)
        assert await server_info(http, mock.base_url + "/v1") == expected
        assert mock.requests == []  # nothing but GETs: no model call, nothing scripted consumed


async def test_a_client_hands_the_slots_it_found_to_its_queue() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.info = llama_cpp_info(slots=3)
        queue = ServerQueue()
        found = await openai_client(mock.base_url, http, queue=queue).server_info()
    assert found == [(mock.base_url + "/v1", ServerInfo(3, 8192, "llama.cpp /props"))]
    assert queue.slots == 3

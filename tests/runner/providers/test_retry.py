"""The retry loop against the real loopback server: server-asked waits, what is never retried, growing
jittered backoff, stalls, attempt timeouts, the deadline, the attempt cap and failed attempts' tokens."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from email.utils import format_datetime

import anyio
import pytest

from bench.mock_provider import Failure, MockUsage, Reply, serve_mock
from runner.providers import HttpSettings, RateLimiter, RateLimits, Retrier, RetryPolicy, make_http_client
from runner.providers.retry import RetryNotice
from runner.providers.taxonomy import ProviderError, ProviderTimeout, RateLimited
from simulators.model_api import ModelResponse
from tests.runner.providers.support import FakeTime, anthropic_client, fast_retrier, openai_client, request

# The mock stalls for good after its scripted events, so any bound finds the stall; 1.5 s rather than 0.2 s
# because at load 12 the mock's first byte once took longer than 0.2 s and the attempt's usage was lost.
FAST_STALL = HttpSettings(stall_timeout_s=1.5, max_connections=8)


async def test_429_retry_after_seconds_is_waited_at_least_that_long() -> None:
    fake = FakeTime()
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(429, retry_after="7"), Reply(text="done"))
        response = await openai_client(mock.base_url, http, fast_retrier(fake)).respond(request())
    assert response.attempts == 2 and response.turn.text == "done"
    assert len(fake.sleeps) == 1 and fake.sleeps[0] >= 7


async def test_429_retry_after_http_date_is_honoured() -> None:
    fake, now = FakeTime(), 1_900_000_000.0
    asked = format_datetime(datetime.fromtimestamp(now + 30, UTC), usegmt=True)
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(429, retry_after=asked), Reply(text="done"))
        client = openai_client(mock.base_url, http, fast_retrier(fake), wall_clock=lambda: now)
        await client.respond(request())
    assert fake.sleeps[0] >= 30


@pytest.mark.parametrize(("headers", "at_least"), [
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s",
      "x-ratelimit-remaining-tokens": "900", "x-ratelimit-reset-tokens": "1s"}, 360),
    ({"anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2030-03-17T12:00:45Z"}, 45),
])
async def test_429_rate_limit_reset_headers_set_the_wait(headers: dict[str, str], at_least: float) -> None:
    fake = FakeTime()
    now = datetime(2030, 3, 17, 12, 0, 0, tzinfo=UTC).timestamp()
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(429, headers=headers), Reply(text="done"))
        await anthropic_client(mock.base_url, http, fast_retrier(fake), wall_clock=lambda: now).respond(request())
    assert at_least <= fake.sleeps[0] <= at_least * 1.1


async def test_real_time_wait_after_retry_after_is_at_least_what_was_asked() -> None:
    retrier = Retrier(RetryPolicy(max_attempts=3, deadline_s=20))
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(429, retry_after="1"), Reply(text="done"))
        started = time.monotonic()
        await openai_client(mock.base_url, http, retrier).respond(request())
        elapsed = time.monotonic() - started
    first, second = mock.requests
    assert second.at - first.at >= 1.0
    assert elapsed >= 1.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(status: int) -> None:
    fake = FakeTime()
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(status, message="bad request"))
        with pytest.raises(ProviderError, match=f"HTTP {status}: bad request"):
            await openai_client(mock.base_url, http, fast_retrier(fake)).respond(request())
    assert len(mock.requests) == 1
    assert fake.sleeps == []


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_are_retried_with_growing_jittered_waits(status: int) -> None:
    fake, notices = FakeTime(), list[RetryNotice]()
    retrier = fast_retrier(fake, notices, max_attempts=6, backoff_initial_s=1.0, backoff_max_s=100.0)
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(*[Failure(status)] * 4, Reply(text="done"))
        response = await anthropic_client(mock.base_url, http, retrier).respond(request())
    assert response.attempts == 5 and len(mock.requests) == 5
    assert fake.sleeps == sorted(fake.sleeps) and len(set(fake.sleeps)) == 4
    for n, wait in enumerate(fake.sleeps):
        ceiling = 2.0**n
        assert ceiling / 2 <= wait <= ceiling
    assert any(wait not in (2.0**n, 2.0 ** (n - 1)) for n, wait in enumerate(fake.sleeps))  # jittered
    assert [n.status for n in notices] == [status] * 4
    assert notices[0].kind == {500: "server error", 503: "overloaded"}[status]


async def test_attempts_are_capped() -> None:
    fake = FakeTime()
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(*[Failure(503)] * 10)
        with pytest.raises(RateLimited, match="gave up after 3 attempts"):
            await openai_client(mock.base_url, http, fast_retrier(fake, max_attempts=3)).respond(request())
    assert len(mock.requests) == 3 and len(fake.sleeps) == 2


async def test_a_wait_past_the_deadline_is_not_started() -> None:
    fake = FakeTime()
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(429, retry_after="120"))
        with pytest.raises(RateLimited, match="gave up after 1 attempt"):
            await openai_client(mock.base_url, http, fast_retrier(fake, deadline_s=60)).respond(request())
    assert len(mock.requests) == 1 and fake.sleeps == []


async def test_a_stalled_stream_times_out_and_is_retried() -> None:
    async with serve_mock() as mock, make_http_client(FAST_STALL) as http:
        mock.script(Reply(text="never finished", stall_after=3), Reply(text="done"))
        response = await openai_client(mock.base_url, http).respond(request())
    assert response.attempts == 2 and response.turn.text == "done"
    assert len(mock.requests) == 2


async def test_stalling_on_every_attempt_is_a_provider_timeout() -> None:
    async with serve_mock() as mock, make_http_client(FAST_STALL) as http:
        mock.script(*[Reply(stall_after=1)] * 3)
        with pytest.raises(ProviderTimeout, match="stalled.*gave up after 3 attempts"):
            await anthropic_client(mock.base_url, http, fast_retrier(max_attempts=3)).respond(request())
    assert len(mock.requests) == 3


async def test_each_attempt_has_a_timeout_even_while_bytes_trickle() -> None:
    # Seconds, not tenths (0.3 s once): the retry's own round trip must fit its attempt on a loaded machine.
    retrier = fast_retrier(attempt_timeout_s=2.0)
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Reply(text="slowly", chunk_delay_s=1.0), Reply(text="done"))
        response = await openai_client(mock.base_url, http, retrier).respond(request())
    assert response.attempts == 2 and response.turn.text == "done"


async def test_the_whole_call_has_a_deadline() -> None:
    retrier = Retrier(RetryPolicy(max_attempts=5, attempt_timeout_s=5, deadline_s=0.3))
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Reply(text="late", delay_s=2))
        with pytest.raises(ProviderTimeout, match="deadline"):
            await openai_client(mock.base_url, http, retrier).respond(request())


async def test_failed_attempts_tokens_are_summed_into_the_usage() -> None:
    # Anthropic bills the prompt as soon as message_start is sent; a stream that stalls after it was paid.
    paid = MockUsage(input_tokens=1000, output_tokens=50, cached_tokens=600)
    async with serve_mock() as mock, make_http_client(FAST_STALL) as http:
        mock.script(Reply(text="partial", usage=paid, stall_after=4), Failure(503),
                    Reply(text="done", usage=MockUsage(input_tokens=1000, output_tokens=30)))
        response = await anthropic_client(mock.base_url, http).respond(request())
    assert response.attempts == 3
    assert response.usage.input_tokens == 2000
    assert response.usage.cached_input_tokens == 600
    assert response.usage.output_tokens == 1 + 30  # message_start's provisional count, then the final one


async def test_failed_openai_attempt_with_usage_sent_counts_too() -> None:
    async with serve_mock() as mock, make_http_client(FAST_STALL) as http:
        # Everything but the final [DONE] arrives (text halves, finish, usage), then silence.
        mock.script(Reply(text="ab", usage=MockUsage(500, 40, cost_usd=0.002), stall_after=5),
                    Reply(text="done", usage=MockUsage(500, 10, cost_usd=0.001)))
        response = await openai_client(mock.base_url, http).respond(request())
    assert response.attempts == 2
    assert (response.usage.input_tokens, response.usage.output_tokens) == (1000, 50)
    assert response.usage.reported_cost_usd == pytest.approx(0.003)
    assert response.cost_usd == pytest.approx(0.003)


async def test_an_overloaded_anthropic_endpoint_counts_as_rate_limited() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(*[Failure(529, message="Overloaded")] * 2)
        with pytest.raises(RateLimited, match="529: Overloaded"):
            await anthropic_client(mock.base_url, http, fast_retrier(max_attempts=2)).respond(request())


async def test_queueing_for_a_rate_limit_slot_does_not_count_against_the_attempt_timeout() -> None:
    limiter = RateLimiter(RateLimits(max_concurrency=1))
    responses: list[ModelResponse] = []
    async with serve_mock() as mock, make_http_client() as http:
        # An attempt timeout in seconds: 0.3 s once, and a loaded machine's own round trip could pass it.
        client = openai_client(mock.base_url, http, fast_retrier(attempt_timeout_s=2.0), limiter=limiter)

        async def call() -> None:
            responses.append(await client.respond(request()))

        async with anyio.create_task_group() as group:
            async with limiter.slot(0) as held:
                group.start_soon(call)
                await anyio.sleep(2.5)  # longer than the attempt timeout
                held.outcome = "ok"
    assert responses[0].attempts == 1 and len(mock.requests) == 1


async def test_a_call_that_fails_for_good_carries_its_attempts_and_billed_tokens() -> None:
    billed = MockUsage(input_tokens=800, output_tokens=0)
    async with serve_mock() as mock, make_http_client(FAST_STALL) as http:
        mock.script(*[Reply(usage=billed, stall_after=2)] * 2)
        with pytest.raises(ProviderTimeout) as caught:
            await anthropic_client(mock.base_url, http, fast_retrier(max_attempts=2)).respond(request())
    assert caught.value.attempts == 2
    assert caught.value.usage.input_tokens == 1600


@pytest.mark.parametrize(("headers", "low", "high"), [
    ({"retry_after": "7"}, 7.0, 7.7),            # what the server asked, stretched by at most 10%
    ({"retry_after": "0"}, 0.5, 1.0),            # asked less than the backoff: the backoff (1 s, equal jitter)
    ({"headers": {"retry-after-ms": "2500"}}, 2.5, 2.75),
])
async def test_a_503_with_retry_after_is_waited_what_the_server_asked_and_not_much_longer(
        headers: dict[str, object], low: float, high: float) -> None:
    fake = FakeTime()
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(503, **headers), Reply(text="done"))  # type: ignore[arg-type]
        response = await openai_client(mock.base_url, http, fast_retrier(fake)).respond(request())
    assert response.turn.text == "done" and response.attempts == 2
    assert len(fake.sleeps) == 1 and low <= fake.sleeps[0] <= high, fake.sleeps


async def test_a_503_asking_for_a_wait_past_the_deadline_is_not_waited() -> None:
    fake = FakeTime()
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(503, retry_after="120"), Reply(text="never asked for"))
        with pytest.raises(RateLimited, match="gave up after 1 attempt"):
            await openai_client(mock.base_url, http, fast_retrier(fake, deadline_s=60)).respond(request())
    assert fake.sleeps == [] and len(mock.requests) == 1

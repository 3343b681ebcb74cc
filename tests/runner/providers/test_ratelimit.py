"""Rate-limit decisions with an injected clock (no sleeping), and the async wrapper's concurrency cap."""

from __future__ import annotations

import anyio
import pytest

from bench.mock_provider import Failure, Reply, serve_mock
from runner.providers import RateLimiter, RateLimits, make_http_client
from runner.providers.headers import LimitReading
from runner.providers.ratelimit import Aimd, Bucket, LimitState
from tests.runner.providers.support import openai_client, request


def test_a_bucket_refills_its_capacity_once_a_minute() -> None:
    bucket = Bucket(60, now=0)
    bucket.take(60, now=0)
    assert bucket.wait_for(1, now=0) == pytest.approx(1.0)
    assert bucket.wait_for(30, now=10) == pytest.approx(20.0)
    assert bucket.wait_for(30, now=30) == 0
    assert bucket.wait_for(1000, now=60) == 0  # more than capacity only needs a full bucket


def test_headers_tighten_a_bucket_but_never_loosen_it_past_the_configuration() -> None:
    bucket = Bucket(100, now=0)
    bucket.tighten(LimitReading(limit=50, remaining=5), now=0)
    assert (bucket.capacity, bucket.level) == (50, 5)
    bucket.tighten(LimitReading(limit=1000), now=0)
    assert bucket.capacity == 100
    unconfigured = Bucket(None, now=0)
    assert unconfigured.wait_for(10**9, now=0) == 0
    unconfigured.tighten(LimitReading(limit=30, remaining=0), now=0)
    assert unconfigured.wait_for(1, now=0) == pytest.approx(2.0)


def test_aimd_halves_once_per_burst_recovers_additively_and_stays_within_bounds() -> None:
    aimd = Aimd(ceiling=16)
    epoch = aimd.epoch
    aimd.on_rate_limited(epoch)
    aimd.on_rate_limited(epoch)  # sent before the decrease: the same congestion signal
    assert aimd.allowed == 8
    for _ in range(8):
        aimd.on_success()
    assert aimd.allowed == 9
    for _ in range(10):
        aimd.on_rate_limited(aimd.epoch)
    assert aimd.allowed == 1
    for _ in range(10_000):
        aimd.on_success()
    assert aimd.allowed == 16


def test_decisions_with_requests_tokens_and_concurrency() -> None:
    state = LimitState(RateLimits(requests_per_minute=120, tokens_per_minute=6000, max_concurrency=2), now=0)
    first = state.try_acquire(1000, now=0).permit
    second = state.try_acquire(1000, now=0).permit
    assert first is not None and second is not None
    full = state.try_acquire(10, now=0)
    assert full.permit is None and full.retry_in is None  # wait for a call to finish
    first.used_tokens, first.outcome = 300, "ok"
    state.release(first, now=0)  # refunds 700 tokens
    big = state.try_acquire(5000, now=0)
    assert big.permit is None and big.retry_in == pytest.approx((5000 - 4700) / 100)
    assert state.try_acquire(5000, now=3).permit is not None


def test_a_429_halves_concurrency_and_header_limits_apply() -> None:
    state = LimitState(RateLimits(max_concurrency=8), now=0)
    permit = state.try_acquire(1, now=0).permit
    assert permit is not None
    permit.outcome = "rate_limited"
    state.release(permit, now=0)
    assert state.concurrency.allowed == 4
    state.observe({"requests": LimitReading(limit=60, remaining=0)}, now=0)
    assert state.try_acquire(1, now=0).retry_in == pytest.approx(1.0)


async def test_the_async_limiter_never_exceeds_its_concurrency() -> None:
    limiter = RateLimiter(RateLimits(max_concurrency=3))
    peak = 0

    async def call() -> None:
        nonlocal peak
        async with limiter.slot(10) as permit:
            peak = max(peak, limiter.in_flight)
            await anyio.sleep(0.01)
            permit.outcome = "ok"

    async with anyio.create_task_group() as group:
        for _ in range(12):
            group.start_soon(call)
    assert peak == 3 and limiter.in_flight == 0


async def test_a_client_reports_429s_and_server_limits_to_its_limiter() -> None:
    limiter = RateLimiter(RateLimits(max_concurrency=8))
    headers = {"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "0"}
    async with serve_mock() as mock, make_http_client() as http:
        mock.script(Failure(429, retry_after="0"), Reply(text="ok", headers=headers))
        await openai_client(mock.base_url, http, limiter=limiter).respond(request())
    assert limiter.concurrency_limit == 4
    assert limiter.state.requests.capacity == 600 and limiter.state.requests.level < 1

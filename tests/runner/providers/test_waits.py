"""A call held before it is sent says why (`runner.providers.waits`): at an open circuit breaker, at a
rate limit, and not for a turn at one of the endpoint's configured slots. Each wait is observed as it
begins (the listener sets an event), never by sleeping."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import anyio
import anyio.abc
import pytest

from runner.providers.breaker import BreakerPolicy, CircuitBreaker
from runner.providers.ratelimit import RateLimiter, RateLimits
from runner.providers.waits import BREAKER_OPEN, QUOTA, WAIT_LISTENER, WaitReason


class Told:
    def __init__(self) -> None:
        self.reasons: list[WaitReason | None] = []
        self.waiting = anyio.Event()

    def __call__(self, reason: WaitReason | None) -> None:
        self.reasons.append(reason)
        if reason is not None:
            self.waiting.set()


async def held_call(enter: AbstractAsyncContextManager[object], told: Told) -> None:
    """Enter an admit or a slot with `told` listening, as a watched call does."""
    WAIT_LISTENER.set(told)
    async with enter:
        pass


async def test_a_call_at_an_open_breaker_says_so_until_it_stops_waiting() -> None:
    breaker = CircuitBreaker(BreakerPolicy(failures_to_open=1, first_probe_s=600.0))
    async with breaker.admit() as ticket:
        ticket.result = "failed"  # one failure opens it; the next probe is ten minutes away
    told = Told()
    async with anyio.create_task_group() as group:
        group.start_soon(held_call, breaker.admit(), told)
        await told.waiting.wait()
        group.cancel_scope.cancel()
    assert told.reasons == [BREAKER_OPEN, None]


async def test_a_call_through_a_closed_breaker_says_nothing() -> None:
    told = Told()
    await held_call(CircuitBreaker().admit(), told)
    assert told.reasons == []


async def test_a_call_waiting_for_a_bucket_to_refill_waits_for_quota() -> None:
    limiter = RateLimiter(RateLimits(requests_per_minute=1))
    async with limiter.slot(10):
        pass  # the minute's one request
    told = Told()
    async with anyio.create_task_group() as group:
        group.start_soon(held_call, limiter.slot(10), told)
        await told.waiting.wait()
        group.cancel_scope.cancel()
    assert told.reasons == [QUOTA, None]


@pytest.mark.parametrize("cut", [False, True])
async def test_a_full_concurrency_is_quota_only_once_429s_have_cut_it(cut: bool) -> None:
    limiter = RateLimiter(RateLimits(max_concurrency=2))
    if cut:
        limiter.state.concurrency.on_rate_limited(0)  # a 429 halved the ceiling of 2 to 1
    told = Told()
    async with limiter.slot(10), anyio.create_task_group() as group:
        if not cut:
            await group.start(_hold, limiter)  # both configured slots taken
        group.start_soon(held_call, limiter.slot(10), told)
        await anyio.wait_all_tasks_blocked()  # the call is queued at the limiter
        group.cancel_scope.cancel()
    assert told.reasons == ([QUOTA, None] if cut else [])


async def _hold(limiter: RateLimiter, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    async with limiter.slot(10):
        task_status.started()
        await anyio.sleep_forever()

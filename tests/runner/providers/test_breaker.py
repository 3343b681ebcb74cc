"""The circuit breaker: failures in a row pause an endpoint, calls wait, one probe at a time tests it."""

from __future__ import annotations

import anyio
import pytest

from runner.display.progress import RunProgress
from runner.providers.breaker import BreakerPolicy, BreakerState, CircuitBreaker, Ticket
from runner.providers.failures import AttemptFailed
from runner.providers.taxonomy import Failure

POLICY = BreakerPolicy(failures_to_open=3, first_probe_s=2.0, max_probe_interval_s=8.0, give_up_after_s=100.0)


def fail(state: BreakerState, now: float) -> None:
    turn = state.turn(now)
    assert turn.ticket is not None
    turn.ticket.result = "failed"
    state.settle(turn.ticket, now)


def test_failures_in_a_row_open_it_and_probes_come_at_growing_intervals() -> None:
    state = BreakerState(POLICY)
    for _ in range(3):
        fail(state, 0.0)
    assert state.is_open and state.opened == 1
    assert state.turn(1.0).wait_s == pytest.approx(1.0)  # waits for the first probe at t=2
    probe = state.turn(2.0).ticket
    assert probe is not None and probe.probe
    assert state.turn(2.5).ticket is None and state.turn(2.5).wait_s is None  # one probe at a time
    probe.result = "failed"
    state.settle(probe, 3.0)
    assert state.paused_for(3.0) == pytest.approx(4.0)  # interval doubled
    probes = []
    now = 3.0
    while now < 40:
        now += 0.5
        turn = state.turn(now)
        if turn.ticket is not None:
            probes.append(now)
            turn.ticket.result = "failed"
            state.settle(turn.ticket, now)
    gaps = [b - a for a, b in zip(probes, probes[1:], strict=False)]
    assert gaps and all(gap <= 8.0 for gap in gaps) and gaps == sorted(gaps)


def test_an_answer_closes_it_and_a_cancelled_probe_frees_the_next_waiter() -> None:
    state = BreakerState(POLICY)
    for _ in range(3):
        fail(state, 0.0)
    probe = state.turn(2.0).ticket
    assert probe is not None
    state.settle(probe, 2.1)  # cancelled: result still pending
    again = state.turn(2.1).ticket
    assert again is not None and again.probe
    again.result = "answered"
    state.settle(again, 2.2)
    assert not state.is_open and state.turn(2.3).ticket == Ticket(probe=False)


def test_it_gives_up_after_the_limit() -> None:
    state = BreakerState(POLICY)
    for _ in range(3):
        fail(state, 0.0)
    assert state.turn(100.0).down


async def test_calls_wait_while_it_is_open_and_fail_as_endpoint_down_past_the_limit() -> None:
    policy = BreakerPolicy(failures_to_open=1, first_probe_s=0.05, give_up_after_s=0.3)
    breaker = CircuitBreaker(policy, label="http://x")
    progress = RunProgress("run", "j")
    progress.endpoints = [breaker]
    async with breaker.admit() as ticket:
        ticket.result = "failed"
    assert progress.paused_endpoints()[0].startswith("http://x paused")
    results: list[str] = []

    async def call() -> None:
        try:
            async with breaker.admit() as ticket:
                ticket.result = "failed"
                results.append("probe")
        except AttemptFailed as failed:
            assert failed.failure is Failure.ENDPOINT_DOWN and failed.final
            results.append("down")

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(call)
    assert results.count("down") >= 1 and results[-1] == "down"
    assert results.count("probe") <= 3  # 0.05 + 0.1 + 0.2 > 0.3: at most a few probes, never 4 at once

"""Endpoint pools: least-outstanding routing, breakers per replica, failover that costs no attempt."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

import anyio
import httpx
import pytest

from bench.mock_provider import serve_mock
from runner.providers import OpenAICompatClient, RateLimiter, Retrier, RetryPolicy
from runner.providers.breaker import BreakerPolicy, CircuitBreaker
from runner.providers.ledger import RequestLedger
from runner.providers.pool import Replica, Route, Router
from simulators.model_api import ModelRequest
from simulators.protocol import Message

POLICY = BreakerPolicy(failures_to_open=2, first_probe_s=5.0, max_probe_interval_s=20.0, give_up_after_s=100.0)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def router(n: int, clock: Clock | None = None) -> Router:
    clock = clock or Clock()
    replicas = [Replica(f"http://r{i}/v1", f"http://r{i}/v1", RateLimiter(), CircuitBreaker(POLICY, clock=clock))
                for i in range(n)]
    return Router(replicas, clock=clock)


def open_breaker(replica: Replica, now: float) -> None:
    state = replica.breaker.state
    for _ in range(POLICY.failures_to_open):
        turn = state.turn(now)
        assert turn.ticket is not None
        turn.ticket.result = "failed"
        state.settle(turn.ticket, now)
    assert state.is_open


def test_each_call_goes_to_the_replica_with_fewest_outstanding_ties_in_round_robin() -> None:
    pool = router(3)
    outstanding = [4, 1, 1]
    for replica, n in zip(pool.replicas, outstanding, strict=True):
        replica.outstanding = n
    # r1 and r2 tie at 1: round robin takes r1, then r2 (the cursor moved past r1).
    assert pool.route(0.0).index == 1
    assert pool.route(0.0).index == 2
    pool.replicas[2].outstanding = 0
    assert pool.route(0.0).index == 2
    # All equal: every replica in turn, never the same twice in a row.
    for replica in pool.replicas:
        replica.outstanding = 2
    assert [pool.route(0.0).index for _ in range(6)] == [0, 1, 2, 0, 1, 2]


def test_routing_follows_in_flight_counts_as_calls_start_and_end() -> None:
    pool = router(3)
    picks = []
    for _ in range(7):  # seven calls start, none ends: they spread 3/2/2
        index = pool.route(0.0).index
        assert index is not None
        pool.replicas[index].outstanding += 1
        picks.append(index)
    assert [r.outstanding for r in pool.replicas] == [3, 2, 2]
    assert picks == [0, 1, 2, 0, 1, 2, 0]
    pool.replicas[0].outstanding -= 2  # two calls on r0 end: it has the fewest now
    assert pool.route(0.0).index == 0


def test_an_open_replica_takes_no_calls_until_its_probe_is_due_then_the_probe_goes_first() -> None:
    clock = Clock()
    pool = router(3, clock)
    open_breaker(pool.replicas[1], 0.0)
    pool.replicas[1].outstanding = 0
    pool.replicas[0].outstanding = pool.replicas[2].outstanding = 5
    # r1 has the fewest calls in flight, but its breaker is open: never routed to before its probe is due.
    assert {pool.route(1.0).index for _ in range(6)} == {0, 2}
    assert pool.route(POLICY.first_probe_s).index == 1  # the due probe goes first
    turn = pool.replicas[1].breaker.state.turn(POLICY.first_probe_s)
    assert turn.ticket is not None and turn.ticket.probe
    # While its probe is out, r1 takes nothing else.
    assert pool.route(POLICY.first_probe_s + 0.1).index in (0, 2)


def test_tried_replicas_are_skipped_and_a_pool_with_none_left_fails_the_attempt() -> None:
    pool = router(3)
    assert pool.route(0.0, tried={0}).index in (1, 2)
    assert pool.route(0.0, tried={0, 1, 2}) == Route(exhausted=True)


def test_with_every_breaker_open_calls_wait_for_the_next_probe_then_the_pool_is_down() -> None:
    pool = router(2)
    open_breaker(pool.replicas[0], 0.0)
    open_breaker(pool.replicas[1], 1.0)
    waiting = pool.route(2.0)
    assert waiting.index is None and not waiting.down and waiting.wait_s == pytest.approx(3.0)
    # The pool is down only when the last replica to open has been open for give_up_after_s.
    assert not pool.route(POLICY.give_up_after_s + 0.5).down
    assert pool.route(POLICY.give_up_after_s + 1.0).down


def test_a_replica_open_past_give_up_is_still_probed_while_the_pool_runs_on_the_others() -> None:
    clock = Clock()
    replicas = [Replica(f"http://r{i}/v1", f"http://r{i}/v1", RateLimiter(),
                        CircuitBreaker(POLICY, clock=clock, gives_up=False)) for i in range(2)]
    pool = Router(replicas, clock=clock)
    open_breaker(replicas[0], 0.0)
    state = replicas[0].breaker.state
    later = POLICY.give_up_after_s * 10  # long past the give-up time, probes at their longest interval
    assert state.open_past_give_up(later) and not state.down(later)
    assert pool.route(later) == Route(0)  # its probe is due: it goes first, the pool is not down
    turn = state.turn(later)
    assert turn.ticket is not None and turn.ticket.probe
    turn.ticket.result = "answered"  # it came back
    state.settle(turn.ticket, later)
    replicas[1].outstanding = 1
    assert pool.route(later).index == 0 and not state.is_open


def test_a_replica_that_gives_up_alone_is_never_probed_again() -> None:
    """What a pool's replicas must not do (and a lone endpoint's breaker does): after give-up, no probe."""
    pool = router(2)
    open_breaker(pool.replicas[0], 0.0)
    later = POLICY.give_up_after_s * 10
    assert pool.replicas[0].breaker.state.down(later)
    assert {pool.route(later).index for _ in range(4)} == {1}


def refused_url() -> str:
    """A loopback port nobody listens on: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


REQUEST = ModelRequest(system="s", messages=(Message(role="user", content="hello"),), max_output_tokens=50)


async def test_a_refused_replica_fails_over_without_using_an_attempt_then_its_breaker_keeps_calls_off() -> None:
    dead = refused_url()
    async with serve_mock() as mock, httpx.AsyncClient() as http:
        live = mock.base_url + "/v1"
        # Probes far apart: on a slow machine the dead replica's first probe still comes after these calls.
        policy = BreakerPolicy(failures_to_open=2, first_probe_s=3600.0, max_probe_interval_s=3600.0,
                               give_up_after_s=7200.0)
        replicas = [Replica(url, url, RateLimiter(), CircuitBreaker(policy, label=url)) for url in (dead, live)]
        pool = Router(replicas)
        ledger = RequestLedger(3)
        client = OpenAICompatClient("m", base_url=dead, api_key="k", http=http, router=pool,
                                    retrier=Retrier(RetryPolicy(max_attempts=3), ledger=ledger))
        responses = [await client.respond(REQUEST) for _ in range(6)]
    # Every call answered by the live replica in its first attempt: failover is no retry.
    assert [(r.attempts, r.replica) for r in responses] == [(1, live)] * 6
    assert ledger.refused == 0
    # The dead replica was tried until its breaker opened (2 failures), then never again.
    assert (replicas[0].served, replicas[0].failed, replicas[0].outstanding) == (0, 2, 0)
    assert replicas[0].breaker.state.is_open
    assert (replicas[1].served, replicas[1].outstanding) == (6, 0)
    assert len(mock.requests) == 6


async def test_a_replica_that_died_and_came_back_long_after_give_up_takes_calls_again() -> None:
    dead = refused_url()
    port = int(dead.rsplit(":", 1)[1].split("/")[0])
    # Give-up and probe intervals in tenths of a second, so "long after give-up" is a short sleep.
    policy = BreakerPolicy(failures_to_open=1, first_probe_s=0.05, max_probe_interval_s=0.1, give_up_after_s=0.2)
    async with serve_mock() as mock, httpx.AsyncClient() as http:
        live = mock.base_url + "/v1"
        replicas = [Replica(url, url, RateLimiter(), CircuitBreaker(policy, label=url, gives_up=False))
                    for url in (dead, live)]
        client = OpenAICompatClient("m", base_url=dead, api_key="k", http=http, router=Router(replicas),
                                    retrier=Retrier(RetryPolicy(max_attempts=3), ledger=RequestLedger(3)))
        for _ in range(3):
            assert (await client.respond(REQUEST)).replica == live
        assert replicas[0].breaker.state.is_open
        await anyio.sleep(3 * policy.give_up_after_s)
        assert replicas[0].breaker.state.open_past_give_up(time.monotonic())
        async with serve_mock(port=port) as back:
            # Its next probe falls due within 0.1 s; calls keep going to the live one until then.
            for _ in range(200):
                if (await client.respond(REQUEST)).replica == dead:
                    break
                await anyio.sleep(0.02)
            assert len(back.requests) >= 1
            assert (await client.respond(REQUEST)).replica in (dead, live)
    assert not replicas[0].breaker.state.is_open  # closed again by the answered probe


async def test_a_sweep_files_pool_gives_its_replicas_breakers_that_never_give_up_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.models.registry import build_model, close_models

    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "k")
    endpoints = {"pool": {"kind": "openai-compatible", "model": "m",
                          "base_urls": ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]}}
    entries = {"pool": build_model("pool", endpoints), "one": build_model("openai-compatible:m@http://127.0.0.1:9/v1")}
    try:
        router = entries["pool"].router
        assert router is not None and len(router.replicas) == 2
        assert all(not replica.breaker.state.gives_up for replica in router.replicas)
        assert entries["one"].breakers()[0].state.gives_up  # a lone endpoint still stops the run when down
    finally:
        await close_models(entries)


@contextlib.contextmanager
def blackholed_url() -> Iterator[str]:
    """A loopback port whose accept queue is full: the kernel drops new connections' SYNs, so connecting
    times out (as to a host that has gone silent) instead of being refused."""
    with socket.socket() as listener, contextlib.ExitStack() as stack:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        for _ in range(3):  # fill the queue (backlog 0 holds one) and then some
            filler = stack.enter_context(socket.socket())
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
        yield f"http://127.0.0.1:{port}/v1"


async def test_a_replica_that_times_out_connecting_fails_over_without_using_an_attempt() -> None:
    policy = BreakerPolicy(failures_to_open=2, first_probe_s=3600.0, max_probe_interval_s=3600.0,
                           give_up_after_s=7200.0)
    with blackholed_url() as silent:
        async with serve_mock() as mock, httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=0.5)) as http:
            live = mock.base_url + "/v1"
            replicas = [Replica(url, url, RateLimiter(), CircuitBreaker(policy, label=url)) for url in (silent, live)]
            ledger = RequestLedger(3)
            client = OpenAICompatClient("m", base_url=silent, api_key="k", http=http, router=Router(replicas),
                                        retrier=Retrier(RetryPolicy(max_attempts=3), ledger=ledger))
            responses = [await client.respond(REQUEST) for _ in range(4)]
    # The silent replica cost each call that tried it half a second, never an attempt of the request.
    assert [(r.attempts, r.replica) for r in responses] == [(1, live)] * 4
    assert (replicas[0].served, replicas[0].failed) == (0, 2) and replicas[0].breaker.state.is_open

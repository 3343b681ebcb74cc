"""Endpoint pools: one model served by several base URLs (vLLM or SGLang replicas, or several keys' quotas).

    Replica         one base URL (and key) of the pool, with its own rate limiter and circuit breaker,
                    and its counts: calls outstanding (routed to it: waiting for its slot or in flight),
                    served, failed
    Router          the routing decision, plain and synchronous with the time passed in (tested without
                    servers): a replica whose probe is due first, else the ready replica with the fewest
                    outstanding calls, ties in round robin
    PooledEndpoint  what a client sends through instead of one `Endpoint`: routes each try, fails over

Failover, and how it counts against a request's attempts (`runner.providers.ledger`): a transport failure
(connection refused or reset, connecting timed out, the server gone mid-reply) says the replica failed,
not the request, so the same attempt goes at once to a replica it has not tried yet: no backoff, no count
in the ledger. The
attempt fails, and counts once, when every ready replica has failed it that way, or when a replica
answered with any other failure (a status, a stall, a garbled reply): then the retry loop waits as it
would for one endpoint and routes its next attempt afresh. So a request body makes at most
`max_request_attempts` counted attempts and at most that many times the number of replicas sends, and a
replica dying mid-run costs its calls in flight one extra send each, never an episode.

Every try still counts in its own replica's breaker: a dead replica opens after `breaker_failures` tries,
then takes no calls but its probes (a due probe is the next call routed; if it fails, that call fails over
too), and is routed to again once a probe is answered. A replica's breaker never gives up on its own:
while the pool runs on the others, a dead replica is probed every `max_probe_interval_s`, however long it
has been gone, so one restarted mid-sweep is used again. While no replica is ready (every breaker open, no
probe due) calls wait; once every replica has been open for `endpoint_down_after_s`, calls fail with
`endpoint down` and the run stops (resumable), exactly as for one endpoint.

The sweep file's limits (`max_concurrency`, `requests_per_minute`, `tokens_per_minute`) apply to each
replica: a replica is a server (or a key) with its own capacity.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import anyio

from runner.providers.breaker import CircuitBreaker
from runner.providers.endpoint import Endpoint, Reader
from runner.providers.failures import AttemptFailed
from runner.providers.ratelimit import RateLimiter
from runner.providers.retry import Attempt
from runner.providers.secret import Secret
from runner.providers.server_queue import ServerQueue
from runner.providers.taxonomy import Failure
from runner.providers.waits import BREAKER_OPEN, report_wait

__all__ = ["FAILOVER", "PooledEndpoint", "Replica", "Route", "Router", "SecretSet", "pooled"]

T = TypeVar("T")

FAILOVER = frozenset({Failure.TRANSPORT})
"""Failures that re-route the same attempt to another replica at once: the request never got an answer."""


@dataclass
class Replica:
    label: str
    """What the journal records as the call's replica: the base URL (with the key's variable when the
    pool is several keys on one URL). Never a key."""
    base_url: str
    limiter: RateLimiter
    breaker: CircuitBreaker
    secret: Secret | None = None
    """Its own key; None: the client's."""
    queue: ServerQueue = field(default_factory=ServerQueue)
    """Our streamed calls in flight to it, and its published slots (`runner.providers.server_queue`)."""
    outstanding: int = 0
    served: int = 0
    failed: int = 0


@dataclass(frozen=True)
class Route:
    index: int | None = None
    """The replica to try; None: no replica now (see the other fields)."""
    exhausted: bool = False
    """Every replica that could take the attempt has failed it: the attempt fails."""
    down: bool = False
    """Every replica's breaker gave up: the endpoint is down."""
    wait_s: float | None = None
    """Nothing ready yet: seconds until a probe is due (None: until a try in flight ends)."""


class Router:
    """One per pooled endpoint, shared by every client that calls it (like a limiter or a breaker)."""

    def __init__(self, replicas: Sequence[Replica], label: str = "endpoint",
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not replicas:
            raise ValueError("a pool needs at least one replica")
        self.replicas = tuple(replicas)
        self.label = label
        self._clock = clock
        self._cursor = 0
        self._changed: anyio.Event | None = None

    def now(self) -> float:
        return self._clock()

    def route(self, now: float, tried: Container[int] = ()) -> Route:
        states = [replica.breaker.state for replica in self.replicas]
        if all(state.open_past_give_up(now) for state in states):
            return Route(down=True)
        untried = [i for i in range(len(states)) if i not in tried]
        ready = [i for i in untried if states[i].ready(now)]
        # A due probe goes first: otherwise a recovered replica would wait for the healthy ones to fail.
        probes = [i for i in ready if states[i].is_open]
        if probes:
            return Route(probes[0])
        if ready:
            return Route(self._least_outstanding(ready))
        if len(untried) < len(states):
            return Route(exhausted=True)
        return Route(wait_s=self._wait(now))

    def _least_outstanding(self, candidates: Sequence[int]) -> int:
        fewest = min(self.replicas[i].outstanding for i in candidates)
        n = len(self.replicas)
        # Ties in round robin: the first tied replica at or after the cursor.
        chosen = min((i for i in candidates if self.replicas[i].outstanding == fewest),
                     key=lambda i: (i - self._cursor) % n)
        self._cursor = (chosen + 1) % n
        return chosen

    def _wait(self, now: float) -> float | None:
        waits = [state.next_probe_at - now for state in (r.breaker.state for r in self.replicas)
                 if state.is_open and not state.probing and not state.down(now)]
        # The latest give-up among the replicas: when it passes, every replica is down.
        opened = [r.breaker.state for r in self.replicas if r.breaker.state.opened_at is not None]
        until_down = max((s.policy.give_up_after_s - (now - (s.opened_at or now)) for s in opened), default=math.inf)
        wait = min([*waits, until_down])
        return None if math.isinf(wait) else max(0.0, wait)

    async def wait(self, seconds: float | None) -> None:
        """Until a try ends somewhere in the pool (a breaker may have changed) or `seconds` pass."""
        if self._changed is None:
            self._changed = anyio.Event()
        changed = self._changed
        with anyio.move_on_after(seconds if seconds is not None else math.inf):
            await changed.wait()

    def changed(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def counts(self) -> list[tuple[str, int, int, int]]:
        """(label, outstanding, served, failed) per replica, for the dashboard and the bench."""
        return [(r.label, r.outstanding, r.served, r.failed) for r in self.replicas]


class SecretSet(Secret):
    """Every replica's key, for redacting text that came back from any of them; never sent."""

    __slots__ = ("_all",)

    def __init__(self, secrets: Sequence[Secret]) -> None:
        super().__init__("")
        self._all = tuple(secrets)

    def redact(self, text: str) -> str:
        for secret in self._all:
            text = secret.redact(text)
        return text


@dataclass(frozen=True)
class PooledEndpoint:
    router: Router
    endpoints: tuple[Endpoint, ...]
    """One per replica of the router, in its order."""

    @property
    def url(self) -> str:
        """The first replica's URL: the request ledger's key, so a body's attempts count pool-wide."""
        return self.endpoints[0].url

    @property
    def secret(self) -> Secret:
        return SecretSet([e.secret for e in self.endpoints])

    def with_stall_timeout(self, stall_timeout: bool) -> PooledEndpoint:
        return replace(self, endpoints=tuple(e.with_stall_timeout(stall_timeout) for e in self.endpoints))

    async def send(self, payload: bytes, reserve_tokens: float, attempt: Attempt, read: Reader[T]) -> T:
        tried: set[int] = set()
        last: AttemptFailed | None = None
        while True:
            index = await self._route(attempt, tried, last)
            tried.add(index)
            replica = self.router.replicas[index]
            attempt.replica = replica.label
            replica.outstanding += 1
            try:
                result = await self.endpoints[index].send(payload, reserve_tokens, attempt, read)
            except AttemptFailed as failed:
                replica.failed += 1
                if failed.failure not in FAILOVER or failed.final:
                    raise
                last = failed
                continue
            finally:
                replica.outstanding -= 1
                self.router.changed()
            replica.served += 1
            return result

    async def _route(self, attempt: Attempt, tried: set[int], last: AttemptFailed | None) -> int:
        held = False  # every replica's breaker is open: the call says so while it waits
        try:
            while True:
                route = self.router.route(self.router.now(), tried)
                if route.index is not None:
                    return route.index
                if route.exhausted:
                    assert last is not None  # a replica was tried, so one failed
                    raise last
                if route.down:
                    policy = self.router.replicas[0].breaker.state.policy
                    raise AttemptFailed(Failure.ENDPOINT_DOWN, f"every replica of {self.router.label} has failed "
                                        f"every request for {policy.give_up_after_s:g}s (circuit breakers open)",
                                        final=True)
                if not held:
                    held = True
                    report_wait(BREAKER_OPEN)
                attempt.pause_clock()  # waiting for a replica to come back is not the provider being slow
                await self.router.wait(route.wait_s)
        finally:
            if held:
                report_wait(None)


def pooled(router: Router, build: Callable[[Replica], Endpoint]) -> PooledEndpoint:
    """The pool as a client sends through it; `build` makes one replica's `Endpoint` (URL path, auth)."""
    return PooledEndpoint(router, tuple(build(replica) for replica in router.replicas))

"""A circuit breaker per endpoint: a provider that is down gets one probe at a time, not a retry storm.

    closed   calls go out; breaker failures in a row are counted (the taxonomy says which classes count)
    open     after `failures_to_open` of them: calls wait (they do not fail); one call at a time goes out
             as the probe, at growing intervals (first_probe_s, doubled per failed probe, capped)
    closed   again as soon as any call gets an answer that shows the endpoint is up
    down     open for longer than `give_up_after_s`: every waiting call fails with `endpoint down`, whose
             policy stops the run ("resume later"). A pool's replica never gives up on its own
             (`gives_up=False`): it is probed at `max_probe_interval_s` for as long as the pool runs, so a
             replica that restarts after an hour takes calls again; the pool is down only when all are.

`BreakerState` holds the decisions, plain and synchronous with the time passed in, so it is tested
without sleeping; `CircuitBreaker` only waits for its turn. The dashboard reads `paused_for`, and a call
held by an open breaker says so (`runner.providers.waits`) for its stream's row.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

import anyio

from runner.providers.failures import AttemptFailed
from runner.providers.taxonomy import Failure
from runner.providers.waits import BREAKER_OPEN, report_wait

__all__ = ["BreakerPolicy", "BreakerState", "CircuitBreaker", "Ticket", "Turn"]


@dataclass(frozen=True)
class BreakerPolicy:
    failures_to_open: int = 5
    first_probe_s: float = 2.0
    max_probe_interval_s: float = 60.0
    give_up_after_s: float = 900.0
    """Open this long without a sign of life: the endpoint is down and the run stops (resumable)."""

    def __post_init__(self) -> None:
        if self.failures_to_open < 1:
            raise ValueError("failures_to_open must be at least 1")
        for name in ("first_probe_s", "max_probe_interval_s", "give_up_after_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite number of seconds > 0")


Result = Literal["pending", "answered", "failed"]


@dataclass
class Ticket:
    probe: bool
    result: Result = "pending"
    """answered: the endpoint answered (a success, or a failure that is no sign of an outage);
    failed: a failure that counts; pending: the call never finished (cancelled)."""


@dataclass(frozen=True)
class Turn:
    ticket: Ticket | None = None
    wait_s: float | None = None
    """Not admitted yet: seconds until the next probe may go; None: until the probe in flight ends."""
    down: bool = False


class BreakerState:
    def __init__(self, policy: BreakerPolicy, gives_up: bool = True) -> None:
        self.policy = policy
        self.gives_up = gives_up
        self.consecutive = 0
        self.opened_at: float | None = None
        self.next_probe_at = 0.0
        self.interval = policy.first_probe_s
        self.probing = False
        self.opened = 0
        """How many times the breaker has opened (for reports and tests)."""

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None

    def turn(self, now: float) -> Turn:
        if self.opened_at is None:
            return Turn(Ticket(probe=False))
        if self.down(now):
            return Turn(down=True)
        if self.probing:
            return Turn()
        if now >= self.next_probe_at:
            self.probing = True
            return Turn(Ticket(probe=True))
        return Turn(wait_s=self.next_probe_at - now)

    def ready(self, now: float) -> bool:
        """`turn` would admit a call now (closed, or open with its probe due): what a pool routes by."""
        if self.opened_at is None:
            return True
        return not self.probing and now >= self.next_probe_at and not self.down(now)

    def down(self, now: float) -> bool:
        return self.gives_up and self.open_past_give_up(now)

    def open_past_give_up(self, now: float) -> bool:
        """Open for `give_up_after_s` or longer, whether or not this breaker gives up then."""
        return self.opened_at is not None and now - self.opened_at >= self.policy.give_up_after_s

    def settle(self, ticket: Ticket, now: float) -> None:
        if ticket.result == "answered":
            self.consecutive, self.opened_at, self.probing = 0, None, False
            self.interval = self.policy.first_probe_s
            return
        if ticket.probe:
            self.probing = False
        if ticket.result == "pending":
            return  # a cancelled probe tells nothing: the next waiter may probe at once
        self.consecutive += 1
        if ticket.probe:
            self.interval = min(self.policy.max_probe_interval_s, self.interval * 2)
            self.next_probe_at = now + self.interval
        elif self.opened_at is None and self.consecutive >= self.policy.failures_to_open:
            self.opened_at, self.opened = now, self.opened + 1
            self.next_probe_at = now + self.interval

    def paused_for(self, now: float) -> float | None:
        """None while closed; else seconds until the next probe (0 while one is out)."""
        if self.opened_at is None:
            return None
        return 0.0 if self.probing else max(0.0, self.next_probe_at - now)


class CircuitBreaker:
    """One per endpoint, shared by every client that calls it (like its rate limiter)."""

    def __init__(self, policy: BreakerPolicy = BreakerPolicy(), label: str = "endpoint",
                 clock: Callable[[], float] = time.monotonic, gives_up: bool = True) -> None:
        self.label = label
        self.state = BreakerState(policy, gives_up)
        self._clock = clock
        self._changed: anyio.Event | None = None

    def paused_for(self) -> float | None:
        return self.state.paused_for(self._clock())

    @asynccontextmanager
    async def admit(self) -> AsyncIterator[Ticket]:
        """Wait while the endpoint is paused; the caller sets `result` on the ticket it is given."""
        ticket = await self._turn()
        try:
            yield ticket
        finally:
            self.state.settle(ticket, self._clock())
            self._wake()

    async def _turn(self) -> Ticket:
        held = False  # said once, when the call first has to wait, and unsaid however the wait ends
        try:
            while True:
                turn = self.state.turn(self._clock())
                if turn.ticket is not None:
                    return turn.ticket
                if turn.down:
                    raise AttemptFailed(Failure.ENDPOINT_DOWN, f"{self.label} has failed every request for "
                                        f"{self.state.policy.give_up_after_s:g}s (circuit breaker open)", final=True)
                if not held:
                    held = True
                    report_wait(BREAKER_OPEN)
                await self._wait(turn)
        finally:
            if held:
                report_wait(None)

    async def _wait(self, turn: Turn) -> None:
        """Until a call settles (the state may have changed), the next probe is due, or the give-up time."""
        if self._changed is None:
            self._changed = anyio.Event()
        changed = self._changed
        until_down = self.state.policy.give_up_after_s - (self._clock() - (self.state.opened_at or 0.0))
        wait = min(turn.wait_s if turn.wait_s is not None else math.inf, max(0.0, until_down))
        with anyio.move_on_after(wait):
            await changed.wait()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

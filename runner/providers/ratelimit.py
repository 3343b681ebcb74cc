"""Per-endpoint rate limits: requests- and tokens-per-minute buckets and adaptive concurrency.

    RateLimits      what the user configured for the endpoint
    Bucket          refills its whole capacity once a minute, continuously; tightened (never loosened
                    past the configuration) by the limits the server reports in its headers
    Aimd            the concurrency limit: halved on a 429, +1/limit per success (one slot per round
                    of successes), between 1 and the configured ceiling
    LimitState      the decision logic: grant a permit now, or say how long / for what to wait.
                    Plain and synchronous with an injected clock, so it is tested without sleeping
    RateLimiter     the async wrapper: waits until `LimitState` grants, releases on exit

A call reserves its worst case of tokens (prompt estimate + max output) and settles to what it used,
the way providers count tokens-per-minute themselves.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

import anyio

from runner.providers.headers import LimitReading, read_limits
from runner.providers.priority import CALL_PRIORITY
from runner.providers.waits import QUOTA, WaitReason, report_wait

__all__ = ["Aimd", "Bucket", "Decision", "LimitState", "Permit", "RateLimiter", "RateLimits"]

_MINUTE = 60.0


@dataclass(frozen=True)
class RateLimits:
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_concurrency: int = 32

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")


class Bucket:
    def __init__(self, per_minute: float | None, now: float) -> None:
        self.configured = per_minute
        self.capacity = per_minute if per_minute is not None else math.inf
        self.level = self.capacity
        self._updated = now

    @property
    def unlimited(self) -> bool:
        return math.isinf(self.capacity)

    def wait_for(self, amount: float, now: float) -> float:
        """Seconds until `amount` is available; an amount above capacity only needs a full bucket."""
        self._refill(now)
        missing = min(amount, self.capacity) - self.level
        return 0.0 if missing <= 0 else missing * _MINUTE / self.capacity

    def take(self, amount: float, now: float) -> None:
        self._refill(now)
        self.level -= amount  # may go below zero: a settle-up larger than the reservation is debt

    def give(self, amount: float, now: float) -> None:
        self._refill(now)
        self.level = min(self.capacity, self.level + amount)

    def tighten(self, reading: LimitReading, now: float) -> None:
        """Adopt the server's view: its limit (within the configured one) and its remaining count."""
        self._refill(now)
        if reading.limit is not None and reading.limit > 0:
            configured = self.configured if self.configured is not None else math.inf
            self.capacity = min(configured, reading.limit)
            self.level = min(self.level, self.capacity)
        if reading.remaining is not None and not self.unlimited:
            self.level = min(self.level, reading.remaining)

    def _refill(self, now: float) -> None:
        if not self.unlimited:
            elapsed = max(0.0, now - self._updated)
            self.level = min(self.capacity, self.level + elapsed * self.capacity / _MINUTE)
        self._updated = now


class Aimd:
    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.epoch = 0
        """Bumped on each decrease, so the 429s of calls sent before it don't halve again."""

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    def on_success(self) -> None:
        self.limit = min(float(self.ceiling), self.limit + 1 / self.allowed)

    def on_rate_limited(self, sent_in_epoch: int) -> None:
        # One burst of 429s from calls that were all in flight together is one signal, not many.
        if sent_in_epoch < self.epoch:
            return
        self.limit = max(1.0, self.limit / 2)
        self.epoch += 1


PermitOutcome = Literal["pending", "ok", "rate_limited", "failed"]


@dataclass
class Permit:
    reserved_tokens: float
    epoch: int
    used_tokens: float | None = None
    outcome: PermitOutcome = "pending"


@dataclass(frozen=True)
class Decision:
    permit: Permit | None = None
    retry_in: float | None = None
    """When not granted: seconds until a bucket has refilled enough; None = until a call finishes."""


class LimitState:
    def __init__(self, limits: RateLimits, now: float) -> None:
        self.requests = Bucket(limits.requests_per_minute, now)
        self.tokens = Bucket(limits.tokens_per_minute, now)
        self.concurrency = Aimd(limits.max_concurrency)
        self.in_flight = 0

    def try_acquire(self, tokens: float, now: float) -> Decision:
        if self.in_flight >= self.concurrency.allowed:
            return Decision()
        wait = max(self.requests.wait_for(1, now), self.tokens.wait_for(tokens, now))
        if wait > 0:
            return Decision(retry_in=wait)
        self.requests.take(1, now)
        self.tokens.take(tokens, now)
        self.in_flight += 1
        return Decision(permit=Permit(tokens, self.concurrency.epoch))

    def short_of_quota(self, tokens: float, now: float) -> bool:
        """Held by a rate limit rather than by the endpoint's configured concurrency: a requests- or
        tokens-per-minute bucket is refilling, or 429s have cut the concurrency below its ceiling."""
        if self.requests.wait_for(1, now) > 0 or self.tokens.wait_for(tokens, now) > 0:
            return True
        cut = self.concurrency.allowed < self.concurrency.ceiling
        return cut and self.in_flight >= self.concurrency.allowed

    def release(self, permit: Permit, now: float) -> None:
        self.in_flight -= 1
        used = permit.used_tokens if permit.used_tokens is not None else 0.0
        # Settle the reservation to the actual count (a refund, or a debt when it ran over).
        if used <= permit.reserved_tokens:
            self.tokens.give(permit.reserved_tokens - used, now)
        else:
            self.tokens.take(used - permit.reserved_tokens, now)
        if permit.outcome == "rate_limited":
            self.concurrency.on_rate_limited(permit.epoch)
        elif permit.outcome == "ok":
            self.concurrency.on_success()

    def observe(self, readings: Mapping[str, LimitReading], now: float) -> None:
        if "requests" in readings:
            self.requests.tighten(readings["requests"], now)
        if "tokens" in readings:
            self.tokens.tighten(readings["tokens"], now)


class RateLimiter:
    """One per endpoint, shared by every client that calls it."""

    def __init__(self, limits: RateLimits = RateLimits(), *, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.limits = limits
        self._clock = clock
        self._wall_clock = wall_clock
        self._state = LimitState(limits, clock())
        self._changed: anyio.Event | None = None  # made on first wait: clients may be built outside a loop
        self._waiting: dict[int, int] = {}
        """Waiting calls by priority (runner.providers.priority.CALL_PRIORITY; lower is more urgent)."""

    @property
    def state(self) -> LimitState:
        """The decision state, for reading (dashboard, tests); change it only through the limiter."""
        return self._state

    @property
    def in_flight(self) -> int:
        return self._state.in_flight

    @property
    def concurrency_limit(self) -> int:
        return self._state.concurrency.allowed

    @asynccontextmanager
    async def slot(self, tokens: float) -> AsyncIterator[Permit]:
        permit = await self._acquire(tokens)
        try:
            yield permit
        finally:
            self._state.release(permit, self._clock())
            self._wake()

    def observe(self, headers: Mapping[str, str]) -> None:
        readings = read_limits(headers, self._wall_clock())
        if readings:
            self._state.observe(readings, self._clock())

    async def _acquire(self, tokens: float) -> Permit:
        """A call waits while a more urgent one waits: when the provider's own limit is the tight one,
        serving calls (the critical path) still go first."""
        priority = CALL_PRIORITY.get()
        self._waiting[priority] = self._waiting.get(priority, 0) + 1
        told: WaitReason | None = None
        try:
            while True:
                retry_in: float | None = None
                if not self._more_urgent_waiting(priority):
                    decision = self._state.try_acquire(tokens, self._clock())
                    if decision.permit is not None:
                        return decision.permit
                    retry_in = decision.retry_in
                told = self._tell(tokens, told)
                if self._changed is None:
                    self._changed = anyio.Event()
                changed = self._changed
                with anyio.move_on_after(retry_in if retry_in is not None else math.inf):
                    await changed.wait()
        finally:
            self._waiting[priority] -= 1
            if told is not None:
                report_wait(None)
            self._wake()  # those it held back may go now

    def _tell(self, tokens: float, told: WaitReason | None) -> WaitReason | None:
        """Say (when it changes) whether this wait is for quota, not for one of the configured slots."""
        reason = QUOTA if self._state.short_of_quota(tokens, self._clock()) else None
        if reason != told:
            report_wait(reason)
        return reason

    def _more_urgent_waiting(self, priority: int) -> bool:
        return any(count for level, count in self._waiting.items() if level < priority)

    def _wake(self) -> None:
        # Waiters re-check on any release; one Event per generation avoids a lost wake-up.
        if self._changed is not None:
            self._changed.set()
            self._changed = None

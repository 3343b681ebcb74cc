"""The one retry loop every provider call goes through.

    deadline (whole call) ─┬─ attempt 1 (attempt timeout; the stall timeout lives in httpx) ─ wait ─
                           ├─ attempt 2 ... ─ wait ─
                           └─ attempt n (capped) ─> value, or the last failure as an InfrastructureError

Waits grow exponentially with "equal jitter" (half fixed, half random), so they spread callers out
yet never shrink from one attempt to the next; a wait is never shorter than what the server asked
(Retry-After or rate-limit reset headers). A retry whose wait would end past the deadline is not
made. Attempts for one request body are also bounded across calls (a re-run episode sends its bodies
again) by the shared `RequestLedger`, which refuses a body the provider rejected or whose bound is
spent, without sending it. Every attempt gets an `Attempt`: tokens a failed attempt was billed for (e.g. the prompt of
a stream that stalled) are summed into the result. The tenacity arguments are built in one factory
(`Retrier.retry_arguments`); time, sleeping and randomness are injected so wait logic tests run fast.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio
import tenacity
from tenacity import AsyncRetrying, RetryCallState

from runner.providers.failures import AttemptFailed
from runner.providers.ledger import DEFAULT_MAX_ATTEMPTS, RequestLedger
from runner.providers.taxonomy import Failure, ProviderTimeout, infrastructure_error
from simulators.model_api import Usage

__all__ = ["BEFORE_RETRY", "Attempt", "Outcome", "Retrier", "RetryNotice", "RetryPolicy"]

T = TypeVar("T")
log = logging.getLogger(__name__)
_NEGLIGIBLE_WAIT_S = 0.01
"""A shorter wait for a slot is not worth moving the call's deadline for (nearly every call's wait)."""

BEFORE_RETRY: ContextVar[Callable[[int, Usage], None] | None] = ContextVar("shiftbench_before_retry", default=None)
"""Called with (attempt number, usage billed so far) before every attempt after the first of a call made in
this task; it may raise to stop the call unsent. Set by the layer that prices calls, so each retry reserves
its own worst case instead of every call reserving all its possible attempts up front."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    """Per call; the ledger bounds the attempts of one request body across calls as well."""
    attempt_timeout_s: float = 900.0
    """One attempt, first byte to last; a stalled stream is caught sooner by the stall timeout."""
    deadline_s: float = 1800.0
    """The whole call, the waits between attempts included; time spent queued for a slot (the endpoint's
    own or a server's, see `Attempt.pause_clock`) is not counted."""
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    server_wait_spread: float = 0.1
    """A server-asked wait is stretched by up to this fraction so callers told the same don't stampede."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


class Attempt:
    """One try: what it was billed for so far (parsers update `usage` as it arrives) and its timer."""

    def __init__(self, number: int, scope: anyio.CancelScope, timeout_s: float,
                 on_queued: Callable[[float], None] = lambda waited: None) -> None:
        """`on_queued`: told how long each wait between `pause_clock` and `restart_clock` took (the
        call's deadline does not count it)."""
        self.number = number
        self.usage = Usage()
        self.replica = ""
        """Which replica of a pooled endpoint it went to last (`runner.providers.pool`); empty otherwise."""
        self.served_model = ""
        """The model the reply says served it (parsers set it); empty until then."""
        self.heard: Callable[[], None] = _nothing
        """Readers call it for every piece of a streamed body: the stall timeout's clock (set by the endpoint)."""
        self._scope = scope
        self._timeout_s = timeout_s
        self._on_queued = on_queued
        self._paused_at: float | None = None

    def pause_clock(self) -> None:
        """Stop the attempt timeout, e.g. while queueing for a rate-limit slot or behind a server's slots
        (that is no failure); the call's deadline stops too."""
        self._scope.deadline = math.inf
        if self._paused_at is None:
            self._paused_at = anyio.current_time()

    def restart_clock(self) -> None:
        """Give the attempt its whole timeout again, counted from now."""
        now = anyio.current_time()
        self._scope.deadline = now + self._timeout_s
        if self._paused_at is not None:
            waited, self._paused_at = now - self._paused_at, None
            if waited > _NEGLIGIBLE_WAIT_S:
                self._on_queued(waited)


@dataclass(frozen=True)
class Outcome(Generic[T]):
    value: T
    usage: Usage
    """Summed over all attempts, failed ones included."""
    attempts: int
    replica: str = ""
    """The replica of a pooled endpoint that answered; empty for one endpoint."""
    served_model: str = ""
    """The model the answering reply named; empty when it named none."""
    retried: tuple[str, ...] = ()
    """The failure class of each failed attempt before the answer, in order."""


@dataclass(frozen=True)
class RetryNotice:
    """Told to `on_retry` before each wait (for the dashboard's retries and 429s counters)."""

    attempt: int
    kind: str
    status: int | None
    wait_s: float
    message: str


@dataclass
class _Tally:
    key: str
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    replica: str = ""
    served_model: str = ""
    failures: list[str] = field(default_factory=list)
    """The failure class of each failed attempt, in order."""
    queued_s: float = 0.0
    """Time queued for slots so far: the deadline is moved past it."""
    deadline: anyio.CancelScope | None = None

    def queued(self, waited: float) -> None:
        self.queued_s += waited
        if self.deadline is not None:
            self.deadline.deadline += waited


class Retrier:
    def __init__(
        self,
        policy: RetryPolicy = RetryPolicy(),
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        rng: random.Random | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        ledger: RequestLedger | None = None,
    ) -> None:
        """`ledger`: shared by every retrier of a run, so a body's bound holds across calls; None: a
        ledger of this retrier's own, bounded by `policy.max_attempts`."""
        self.policy = policy
        self.ledger = ledger or RequestLedger(policy.max_attempts)
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._on_retry = on_retry

    async def call(self, attempt: Callable[[Attempt], Awaitable[T]], key: str = "") -> Outcome[T]:
        """Run `attempt` until it succeeds, fails for good, runs out of attempts or hits the deadline.
        `key` names the request body in the ledger (`request_key`); empty: this call alone."""
        tally = _Tally(key or f"call:{id(attempt)}")
        started = self._clock()
        answered = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.policy.deadline_s) as tally.deadline:
                value: T = await self._first_then_retries(attempt, tally, started)
                answered = True
            if not answered:
                raise TimeoutError
        except AttemptFailed as failed:
            message = f"{failed.message} (gave up after {_plural(tally.attempts, 'attempt')})"
            # The failed attempts' tokens travel on the error, so the call is still priced and journaled.
            error = infrastructure_error(failed.failure, message, usage=tally.usage, attempts=tally.attempts,
                                         attempts_left=self._left(tally))
            error.replica = tally.replica
            error.retried = tuple(tally.failures)
            raise error from failed.__cause__
        except TimeoutError as exc:
            timeout = ProviderTimeout(f"no answer within the {self.policy.deadline_s:g}s deadline "
                                      f"({_plural(tally.attempts, 'attempt')})", usage=tally.usage,
                                      attempts=tally.attempts, attempts_left=self._left(tally))
            timeout.retried = (*tally.failures, str(Failure.TIMEOUT))
            raise timeout from exc
        finally:
            if not key:
                self.ledger.succeeded(tally.key)  # a private key: forget it whatever happened
        self.ledger.succeeded(tally.key)
        return Outcome(value, tally.usage, tally.attempts, tally.replica, tally.served_model, tuple(tally.failures))

    async def _first_then_retries(self, attempt: Callable[[Attempt], Awaitable[T]], tally: _Tally,
                                  started: float) -> T:
        """The first attempt runs as is; tenacity's loop (its retry state, hooks and futures, ~20 µs a
        call) is built only once an attempt failed in a way worth retrying, and is handed that failure as
        its own first attempt. So the retry decision, the waits, the stop rules and the notices see exactly
        what a loop that ran every attempt through tenacity would."""
        try:
            return await self._attempt(attempt, tally)
        except AttemptFailed as failed:
            if not failed.retryable:
                raise  # what tenacity does with a failure its retry rule refuses (reraise=True)
            first: AttemptFailed | None = failed

        async def again(attempt: Callable[[Attempt], Awaitable[T]], tally: _Tally) -> T:
            nonlocal first
            if first is not None:
                replayed, first = first, None
                raise replayed
            return await self._attempt(attempt, tally)

        retrying = AsyncRetrying(**self.retry_arguments(started=started, key=tally.key, tally=tally))
        value: T = await retrying(again, attempt, tally)
        return value

    def _left(self, tally: _Tally) -> int:
        return self.ledger.left(tally.key)

    def retry_arguments(self, started: float, key: str = "", tally: _Tally | None = None) -> dict[str, Any]:
        """Everything tenacity is told, in one place."""
        return {
            "retry": tenacity.retry_if_exception(lambda exc: isinstance(exc, AttemptFailed) and exc.retryable),
            "wait": self._wait,
            "stop": self._stop_after(started, key, tally),
            "sleep": self._sleep,
            "before_sleep": self._notify,
            "reraise": True,
        }

    def backoff(self, failures: int) -> float:
        """Equal jitter: within [b/2, b] for b = initial * 2^(failures-1), capped; never below the previous."""
        ceiling = min(self.policy.backoff_max_s, self.policy.backoff_initial_s * 2.0 ** (failures - 1))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    async def _attempt(self, attempt: Callable[[Attempt], Awaitable[T]], tally: _Tally) -> T:
        before_retry = BEFORE_RETRY.get()
        if tally.attempts and before_retry is not None:
            before_retry(tally.attempts + 1, tally.usage)
        self.ledger.admit(tally.key)  # raises, unsent, for a body rejected before or out of attempts
        tally.attempts += 1
        try:
            return await self._timed(attempt, tally)
        except AttemptFailed as failed:
            self.ledger.failed(tally.key, failed)
            tally.failures.append(str(failed.failure))
            raise

    async def _timed(self, attempt: Callable[[Attempt], Awaitable[T]], tally: _Tally) -> T:
        timeout = self.policy.attempt_timeout_s
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
            this = Attempt(tally.attempts, scope, timeout, tally.queued)
            try:
                return await attempt(this)
            finally:
                tally.usage = tally.usage + this.usage
                tally.replica = this.replica or tally.replica
                tally.served_model = this.served_model or tally.served_model
        # Only our own scope's deadline gets here; an outer cancellation propagates as usual.
        raise AttemptFailed(Failure.TIMEOUT, f"attempt ran past {timeout:g}s")

    def _wait(self, state: RetryCallState) -> float:
        wait = self.backoff(state.attempt_number)
        failed = _failure(state)
        if failed is not None and failed.server_wait is not None:
            asked = failed.server_wait * (1 + self._rng.uniform(0, self.policy.server_wait_spread))
            wait = max(wait, asked)
        return wait

    def _stop_after(self, started: float, key: str, tally: _Tally | None) -> Callable[[RetryCallState], bool]:
        def stop(state: RetryCallState) -> bool:
            if state.attempt_number >= self.policy.max_attempts or self.ledger.left(key) <= 0:
                return True
            # tenacity computes the wait before asking to stop: don't start a wait the deadline would cut.
            upcoming = state.upcoming_sleep or 0.0
            queued = tally.queued_s if tally is not None else 0.0
            return self._clock() - started - queued + upcoming > self.policy.deadline_s

        return stop

    def _notify(self, state: RetryCallState) -> None:
        failed = _failure(state)
        if failed is None:
            return
        notice = RetryNotice(state.attempt_number, str(failed.failure), failed.status,
                             state.upcoming_sleep or 0.0, failed.message)
        log.info("retrying after %s on attempt %d: %s; waiting %.2fs",
                 notice.kind, notice.attempt, notice.message, notice.wait_s)
        if self._on_retry is not None:
            self._on_retry(notice)


def _nothing() -> None:
    pass


def _failure(state: RetryCallState) -> AttemptFailed | None:
    exc = state.outcome.exception() if state.outcome is not None else None
    return exc if isinstance(exc, AttemptFailed) else None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"

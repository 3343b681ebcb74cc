"""The one retry loop every provider call goes through.

    deadline (whole call) ─┬─ attempt 1 (attempt timeout; the stall timeout lives in httpx) ─ wait ─
                           ├─ attempt 2 ... ─ wait ─
                           └─ attempt n (capped) ─> value, or the last failure as an InfrastructureError

Waits grow exponentially with "equal jitter" (half fixed, half random), so they spread callers out
yet never shrink from one attempt to the next; a wait is never shorter than what the server asked
(Retry-After or rate-limit reset headers). A retry whose wait would end past the deadline is not
made. Every attempt gets an `Attempt`: tokens a failed attempt was billed for (e.g. the prompt of
a stream that stalled) are summed into the result. The tenacity arguments are built in one factory
(`Retrier.retry_arguments`); time, sleeping and randomness are injected so wait logic tests run fast.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio
import tenacity
from tenacity import AsyncRetrying, RetryCallState

from runner.errors import ProviderTimeout
from runner.providers.failures import AttemptFailed
from simulators.model_api import Usage

__all__ = ["Attempt", "Outcome", "Retrier", "RetryNotice", "RetryPolicy"]

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    attempt_timeout_s: float = 900.0
    """One attempt, first byte to last; a stalled stream is caught sooner by the stall timeout."""
    deadline_s: float = 1800.0
    """The whole call, waits included."""
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    server_wait_spread: float = 0.1
    """A server-asked wait is stretched by up to this fraction so callers told the same don't stampede."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


class Attempt:
    """One try: what it was billed for so far (parsers update `usage` as it arrives) and its timer."""

    def __init__(self, number: int, scope: anyio.CancelScope, timeout_s: float) -> None:
        self.number = number
        self.usage = Usage()
        self._scope = scope
        self._timeout_s = timeout_s

    def pause_clock(self) -> None:
        """Stop the attempt timeout, e.g. while queueing for a rate-limit slot (that is no failure)."""
        self._scope.deadline = math.inf

    def restart_clock(self) -> None:
        """Give the attempt its whole timeout again, counted from now."""
        self._scope.deadline = anyio.current_time() + self._timeout_s


@dataclass(frozen=True)
class Outcome(Generic[T]):
    value: T
    usage: Usage
    """Summed over all attempts, failed ones included."""
    attempts: int


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
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)


class Retrier:
    def __init__(
        self,
        policy: RetryPolicy = RetryPolicy(),
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        rng: random.Random | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ) -> None:
        self.policy = policy
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._on_retry = on_retry

    async def call(self, attempt: Callable[[Attempt], Awaitable[T]]) -> Outcome[T]:
        """Run `attempt` until it succeeds, fails for good, runs out of attempts or hits the deadline."""
        tally = _Tally()
        retrying = AsyncRetrying(**self.retry_arguments(started=self._clock()))
        try:
            with anyio.fail_after(self.policy.deadline_s):
                value: T = await retrying(self._attempt, attempt, tally)
        except AttemptFailed as failed:
            message = f"{failed.message} (gave up after {_plural(tally.attempts, 'attempt')})"
            # The failed attempts' tokens travel on the error, so the call is still priced and journaled.
            raise failed.kind(message, usage=tally.usage, attempts=tally.attempts) from failed.__cause__
        except TimeoutError as exc:
            raise ProviderTimeout(f"no answer within the {self.policy.deadline_s:g}s deadline "
                                  f"({_plural(tally.attempts, 'attempt')})",
                                  usage=tally.usage, attempts=tally.attempts) from exc
        return Outcome(value, tally.usage, tally.attempts)

    def retry_arguments(self, started: float) -> dict[str, Any]:
        """Everything tenacity is told, in one place."""
        return {
            "retry": tenacity.retry_if_exception(lambda exc: isinstance(exc, AttemptFailed) and exc.retryable),
            "wait": self._wait,
            "stop": self._stop_after(started),
            "sleep": self._sleep,
            "before_sleep": self._notify,
            "reraise": True,
        }

    def backoff(self, failures: int) -> float:
        """Equal jitter: within [b/2, b] for b = initial * 2^(failures-1), capped; never below the previous."""
        ceiling = min(self.policy.backoff_max_s, self.policy.backoff_initial_s * 2.0 ** (failures - 1))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    async def _attempt(self, attempt: Callable[[Attempt], Awaitable[T]], tally: _Tally) -> T:
        tally.attempts += 1
        timeout = self.policy.attempt_timeout_s
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
            this = Attempt(tally.attempts, scope, timeout)
            try:
                return await attempt(this)
            finally:
                tally.usage = tally.usage + this.usage
        # Only our own scope's deadline gets here; an outer cancellation propagates as usual.
        raise AttemptFailed(ProviderTimeout, f"attempt ran past {timeout:g}s", retryable=True)

    def _wait(self, state: RetryCallState) -> float:
        wait = self.backoff(state.attempt_number)
        failed = _failure(state)
        if failed is not None and failed.server_wait is not None:
            asked = failed.server_wait * (1 + self._rng.uniform(0, self.policy.server_wait_spread))
            wait = max(wait, asked)
        return wait

    def _stop_after(self, started: float) -> Callable[[RetryCallState], bool]:
        def stop(state: RetryCallState) -> bool:
            if state.attempt_number >= self.policy.max_attempts:
                return True
            # tenacity computes the wait before asking to stop: don't start a wait the deadline would cut.
            upcoming = state.upcoming_sleep or 0.0
            return self._clock() - started + upcoming > self.policy.deadline_s

        return stop

    def _notify(self, state: RetryCallState) -> None:
        failed = _failure(state)
        if failed is None:
            return
        notice = RetryNotice(state.attempt_number, failed.kind.__name__, failed.status,
                             state.upcoming_sleep or 0.0, failed.message)
        log.info("retrying after %s on attempt %d: %s; waiting %.2fs",
                 notice.kind, notice.attempt, notice.message, notice.wait_s)
        if self._on_retry is not None:
            self._on_retry(notice)


def _failure(state: RetryCallState) -> AttemptFailed | None:
    exc = state.outcome.exception() if state.outcome is not None else None
    return exc if isinstance(exc, AttemptFailed) else None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"

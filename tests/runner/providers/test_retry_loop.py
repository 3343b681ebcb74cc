"""The retry loop on its own, with scripted attempts and fake time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from runner.providers.failures import AttemptFailed
from runner.providers.retry import Attempt
from runner.providers.taxonomy import Failure, ProviderError, RateLimited
from simulators.model_api import Usage
from tests.runner.providers.support import FakeTime, fast_retrier

NOTHING = Usage()


def _failing(*failures: AttemptFailed, billed: Usage = NOTHING) -> Callable[[Attempt], Awaitable[str]]:
    remaining = list(failures)

    async def attempt(this: Attempt) -> str:
        this.usage = billed
        if remaining:
            raise remaining.pop(0)
        return f"ok on attempt {this.number}"

    return attempt


def _limited(wait: float | None) -> AttemptFailed:
    return AttemptFailed(Failure.RATE_LIMITED, "HTTP 429", server_wait=wait, status=429)


async def test_the_wait_is_the_larger_of_backoff_and_the_server_s_ask() -> None:
    fake = FakeTime()
    retrier = fast_retrier(fake, backoff_initial_s=4, server_wait_spread=0.0)
    outcome = await retrier.call(_failing(_limited(0.5), _limited(30)))
    assert outcome.value == "ok on attempt 3" and outcome.attempts == 3
    assert 2 <= fake.sleeps[0] <= 4  # backoff beat the 0.5 s ask
    assert fake.sleeps[1] == 30


async def test_usage_of_every_attempt_is_summed() -> None:
    retrier = fast_retrier()
    outcome = await retrier.call(_failing(_limited(None), _limited(None), billed=Usage(10, 0, 0, 2)))
    assert outcome.usage == Usage(30, 0, 0, 6)


async def test_the_deadline_counts_the_time_already_spent() -> None:
    fake = FakeTime()
    retrier = fast_retrier(fake, deadline_s=100, backoff_initial_s=1)

    async def slow_failure(this: Attempt) -> str:
        fake.now += 60  # each attempt takes a minute
        raise AttemptFailed(Failure.SERVER_ERROR, "HTTP 500", status=500)

    with pytest.raises(ProviderError, match="gave up after 2 attempts"):
        await retrier.call(slow_failure)


async def test_bugs_are_not_retried_or_disguised() -> None:
    calls = 0

    async def broken(this: Attempt) -> str:
        nonlocal calls
        calls += 1
        raise KeyError("choices")

    with pytest.raises(KeyError):
        await fast_retrier().call(broken)
    assert calls == 1


async def test_cancellation_passes_through() -> None:
    async def forever(this: Attempt) -> str:
        await anyio.sleep_forever()
        return ""

    with anyio.move_on_after(0.05) as scope:
        await fast_retrier().call(forever)
    assert scope.cancelled_caught


async def test_a_first_attempt_that_succeeds_never_builds_the_retry_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """tenacity's loop costs CPU on every call; it is built only once there is a failure to retry."""

    def unused(**_: object) -> None:
        raise AssertionError("tenacity's loop was built for a call that needed no retry")

    monkeypatch.setattr("runner.providers.retry.AsyncRetrying", unused)
    outcome = await fast_retrier().call(_failing())
    assert (outcome.value, outcome.attempts) == ("ok on attempt 1", 1)


async def test_retries_after_the_first_failure_number_wait_and_notify_as_one_loop() -> None:
    fake, notices = FakeTime(), []  # type: ignore[var-annotated]
    retrier = fast_retrier(fake, notices, backoff_initial_s=4, server_wait_spread=0.0)
    failures = [_limited(None), AttemptFailed(Failure.SERVER_ERROR, "HTTP 500", status=500), _limited(30)]
    outcome = await retrier.call(_failing(*failures, billed=Usage(5, 0, 0, 1)))
    assert (outcome.value, outcome.attempts, outcome.usage) == ("ok on attempt 4", 4, Usage(20, 0, 0, 4))
    assert [n.attempt for n in notices] == [1, 2, 3]
    assert [n.status for n in notices] == [429, 500, 429]
    assert 2 <= fake.sleeps[0] <= 4 and 4 <= fake.sleeps[1] <= 8 and fake.sleeps[2] == 30
    assert [n.wait_s for n in notices] == fake.sleeps


async def test_a_first_failure_is_final_when_it_is_not_retryable_or_attempts_are_spent() -> None:
    notices: list[object] = []
    refused = AttemptFailed(Failure.REJECTED, "HTTP 400", status=400)
    with pytest.raises(ProviderError, match="gave up after 1 attempt") as caught:
        await fast_retrier(None, notices).call(_failing(refused))  # type: ignore[arg-type]
    assert caught.value.attempts == 1
    with pytest.raises(RateLimited, match="gave up after 1 attempt"):
        await fast_retrier(None, notices, max_attempts=1).call(_failing(_limited(None)))  # type: ignore[arg-type]
    assert notices == []

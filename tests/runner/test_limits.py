"""The priority limiter: capacity is never exceeded, serving calls go before test calls, and slots a serving
stream claims are kept for its calls."""

from __future__ import annotations

import anyio
import pytest

from runner.providers.priority import SERVING, TEST, PriorityLimiter, ServingClaim


async def test_capacity_is_never_exceeded_and_serving_goes_first() -> None:
    limiter = PriorityLimiter(2)
    order: list[str] = []
    peak = 0
    gate = anyio.Event()

    async def job(name: str, priority: int) -> None:
        nonlocal peak
        async with limiter.slot(priority):
            peak = max(peak, limiter.in_use)
            order.append(name)
            await gate.wait()

    async with anyio.create_task_group() as group:
        for i in range(2):
            group.start_soon(job, f"first{i}", TEST)
        await anyio.sleep(0.01)
        for i in range(3):
            group.start_soon(job, f"test{i}", TEST)
        await anyio.sleep(0.01)
        group.start_soon(job, "serving", SERVING)
        await anyio.sleep(0.01)
        gate.set()
    assert peak == 2
    assert order[:2] == ["first0", "first1"]
    assert order[2] == "serving"
    assert order[3:] == ["test0", "test1", "test2"]
    assert limiter.in_use == 0


async def test_a_cancelled_waiter_gives_its_turn_away() -> None:
    limiter = PriorityLimiter(1)
    got: list[str] = []
    release = anyio.Event()

    async def holder() -> None:
        async with limiter.slot(TEST):
            await release.wait()

    async def waiter(name: str) -> None:
        async with limiter.slot(SERVING):
            got.append(name)

    async with anyio.create_task_group() as group:
        group.start_soon(holder)
        await anyio.sleep(0.01)
        with anyio.move_on_after(0.01):
            await waiter("cancelled")
        group.start_soon(waiter, "next")
        await anyio.sleep(0.01)
        release.set()
    assert got == ["next"]
    assert limiter.in_use == 0 and limiter.waiting == 0


def test_a_claimed_slot_is_kept_for_serving_calls_and_freed_when_given_back() -> None:
    limiter = PriorityLimiter(3)
    claim = ServingClaim([limiter])
    claim.hold(1)
    assert limiter.try_acquire(TEST) is None
    assert limiter.try_acquire(TEST) is None
    held_back = limiter.try_acquire(TEST)  # the third slot is free but claimed: the test call waits
    assert held_back is not None and not held_back.granted
    assert limiter.try_acquire(SERVING) is None  # a serving call takes it at once
    limiter.release(SERVING)
    assert not held_back.granted  # freed by the serving call: still kept for the stream's next one
    claim.release()  # the stream's serving is over
    assert held_back.granted and limiter.in_use == 3


def test_a_serving_call_in_its_claimed_slot_leaves_the_others_to_tests() -> None:
    limiter = PriorityLimiter(4)
    ServingClaim([limiter]).hold(2)
    assert limiter.try_acquire(SERVING) is None  # one of the two claimed slots in use
    assert limiter.try_acquire(TEST) is None
    assert limiter.try_acquire(TEST) is None
    assert limiter.try_acquire(TEST) is not None  # the other claimed slot stays free
    assert limiter.held_back == 1


def test_claims_never_hold_back_the_last_slot() -> None:
    """A serving episode may itself wait on a test-priority call (a judge): with every slot free, such a
    call must get one however many slots the streams claim."""
    limiter = PriorityLimiter(2)
    ServingClaim([limiter]).hold(5)
    assert limiter.held_back == 1
    assert limiter.try_acquire(TEST) is None
    assert limiter.try_acquire(TEST) is not None


def test_giving_back_more_than_claimed_is_an_error() -> None:
    limiter = PriorityLimiter(2)
    with pytest.raises(ValueError, match="given back"):
        limiter.claim(-1)

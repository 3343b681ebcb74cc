"""The priority limiter: capacity is never exceeded and serving calls go before test calls."""

from __future__ import annotations

import anyio

from runner.limits import SERVING, TEST, PriorityLimiter


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

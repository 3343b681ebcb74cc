"""A provider's own rate limiter keeps the scheduler's order: serving calls first."""

from __future__ import annotations

import anyio

from runner.providers import RateLimiter, RateLimits
from runner.providers.priority import CALL_PRIORITY, SERVING, TEST


async def test_serving_calls_take_the_provider_slot_before_test_calls() -> None:
    limiter = RateLimiter(RateLimits(max_concurrency=1))
    order: list[str] = []
    release = anyio.Event()

    async def call(name: str, priority: int) -> None:
        CALL_PRIORITY.set(priority)
        async with limiter.slot(10):
            order.append(name)
            if name == "holder":
                await release.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(call, "holder", TEST)
        await anyio.sleep(0.01)
        for i in range(3):
            group.start_soon(call, f"test{i}", TEST)
        await anyio.sleep(0.01)
        group.start_soon(call, "serving", SERVING)
        await anyio.sleep(0.01)
        release.set()
    assert order[0] == "holder" and order[1] == "serving"
    assert sorted(order[2:]) == ["test0", "test1", "test2"]

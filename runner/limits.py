"""A capacity limiter that hands free slots to the most urgent waiter first.

Serving episodes are the critical path of a sweep (each waits for the one before it), so when model
capacity is short their calls go before test calls. The queue logic is plain and synchronous; the
async part only waits for its turn.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio

__all__ = ["CALL_PRIORITY", "SERVING", "TEST", "PriorityLimiter"]

SERVING = 0
TEST = 1

CALL_PRIORITY: ContextVar[int] = ContextVar("shiftbench_call_priority", default=TEST)
"""The priority of the model call in progress in this task, set by the gate, so that limits further
down (a provider's own rate limiter) keep the scheduler's order without every layer passing it on."""


@dataclass(order=True)
class _Waiter:
    priority: int
    seq: int
    event: anyio.Event = field(compare=False, default_factory=anyio.Event)
    granted: bool = field(compare=False, default=False)
    abandoned: bool = field(compare=False, default=False)


class PriorityLimiter:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.in_use = 0
        self._waiters: list[_Waiter] = []
        self._seq = itertools.count()

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.abandoned)

    def try_acquire(self, priority: int) -> _Waiter | None:
        """Take a slot now if one is free and nobody is queued; else queue and return the waiter."""
        if self.in_use < self.capacity and not self.waiting:
            self.in_use += 1
            return None
        waiter = _Waiter(priority, next(self._seq))
        heapq.heappush(self._waiters, waiter)
        return waiter

    def release(self) -> None:
        """Pass the slot to the most urgent live waiter, or free it."""
        while self._waiters:
            waiter = heapq.heappop(self._waiters)
            if not waiter.abandoned:
                waiter.granted = True
                waiter.event.set()
                return
        self.in_use -= 1

    @asynccontextmanager
    async def slot(self, priority: int) -> AsyncIterator[None]:
        waiter = self.try_acquire(priority)
        if waiter is not None:
            try:
                await waiter.event.wait()
            except BaseException:
                waiter.abandoned = True
                if waiter.granted:
                    self.release()
                raise
        try:
            yield
        finally:
            self.release()

"""A capacity limiter that hands free slots to the most urgent waiter first, and keeps slots free for
the serving streams' next calls.

Serving episodes are the critical path of a sweep (each waits for the one before it), so when model
capacity is short their calls go before test calls. Priority alone is not enough when test calls fill
every slot: a serving episode's next call (a few milliseconds of CPU after its last one) then waits for
a test call to end, at every turn. So a serving stream also claims slots (`ServingClaim`, one per
episode of its running block) for as long as it serves, and a test call is admitted only while the
slots claimed and not in use by a serving call stay free. At most capacity - 1 slots are held back,
so a test call always gets a slot when nothing is in flight: no claim can deadlock a serving episode
that waits on a test-priority call of its own. The queue logic is plain and synchronous; the async
part only waits for its turn.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import TracebackType

import anyio

from runner.common.episode_age import EPISODE_AGE

__all__ = ["CALL_PRIORITY", "SERVING", "TEST", "PriorityLimiter", "ServingClaim"]

SERVING = 0
TEST = 1

CALL_PRIORITY: ContextVar[int] = ContextVar("shiftbench_call_priority", default=TEST)
"""The priority of the model call in progress in this task, set by the gate, so that limits further
down (a provider's own rate limiter) keep the scheduler's order without every layer passing it on."""


@dataclass(order=True)
class _Waiter:
    priority: int
    age: int
    """Within a priority, the oldest episode's call first (`EPISODE_AGE`), then the first come."""
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
        self.serving_in_use = 0
        self.claimed = 0
        """Slots the serving streams claim (see `ServingClaim`)."""
        self._waiters: list[_Waiter] = []
        self._seq = itertools.count()

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.abandoned)

    @property
    def held_back(self) -> int:
        """Slots kept free for serving calls: claimed and not in use by one, at most capacity - 1."""
        return min(self.capacity - 1, max(0, self.claimed - self.serving_in_use))

    def admits(self, priority: int) -> bool:
        """Whether a call of this priority may take a slot now (queue order aside)."""
        if priority <= SERVING:
            return self.in_use < self.capacity
        return self.in_use + self.held_back < self.capacity

    def try_acquire(self, priority: int) -> _Waiter | None:
        """Take a slot now if this call is admitted and nobody as urgent is queued; else queue and return
        the waiter."""
        if not self._waiters and self.admits(priority):  # the common case: no queue, no waiter to build
            self._take(priority)
            return None
        waiter = _Waiter(priority, EPISODE_AGE.get(), next(self._seq))
        heapq.heappush(self._waiters, waiter)
        self._dispatch()
        return None if waiter.granted else waiter

    def _take(self, priority: int) -> None:
        self.in_use += 1
        if priority <= SERVING:
            self.serving_in_use += 1

    def release(self, priority: int) -> None:
        """Free a slot taken at `priority` and pass it on to whoever is now admitted."""
        self.in_use -= 1
        if priority <= SERVING:
            self.serving_in_use -= 1
        self._dispatch()

    def claim(self, slots: int) -> None:
        """Change the serving streams' claim by `slots` (negative to give slots back)."""
        self.claimed += slots
        if self.claimed < 0:
            raise ValueError("more serving slots given back than claimed")
        self._dispatch()

    def _dispatch(self) -> None:
        """Grant slots in queue order (most urgent, then oldest episode, then first come) while the head
        is admitted. The head is the most urgent waiter, so a test waiter held back never blocks a serving
        one."""
        while self._waiters:
            head = self._waiters[0]
            if head.abandoned:
                heapq.heappop(self._waiters)
                continue
            if not self.admits(head.priority):
                return
            heapq.heappop(self._waiters)
            self._take(head.priority)
            head.granted = True
            head.event.set()

    @asynccontextmanager
    async def slot(self, priority: int) -> AsyncIterator[None]:
        waiter = self.try_acquire(priority)
        if waiter is not None:
            try:
                await waiter.event.wait()
            except BaseException:
                waiter.abandoned = True
                if waiter.granted:
                    self.release(priority)
                raise
        try:
            yield
        finally:
            self.release(priority)


class ServingClaim:
    """The slots one serving stream keeps for its own calls on a model's limiters, for as long as it
    serves: the engine sets it to the episodes of the block it runs (and to 1 between blocks, so a
    test call does not take the slot while the stream learns and hands its block to the journal)."""

    def __init__(self, limiters: Iterable[PriorityLimiter]) -> None:
        self._limiters = tuple(limiters)
        self.slots = 0

    def hold(self, slots: int) -> None:
        change, self.slots = slots - self.slots, slots
        if change:
            for limiter in self._limiters:
                limiter.claim(change)

    def release(self) -> None:
        self.hold(0)

    def __enter__(self) -> ServingClaim:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

"""One (endpoint, model)'s requests waiting to be batched: a batch goes when `max_items` wait (at once, not
after the wait), when the oldest has waited `wait_s`, or at once while `urgent` says so (calls wait for
budget room that these items hold: waiting on for more items would wait on room only their answers give
back; `wake` tells it that this changed)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc

from runner.batching.waiting import BatchClock, Pending, first_of

__all__ = ["Collector"]

Submit = Callable[[list[Pending]], Coroutine[Any, Any, None]]


class Collector:
    def __init__(self, max_items: int, wait_s: float, clock: BatchClock, submit: Submit) -> None:
        self._max_items = max_items
        self._wait_s = wait_s
        self._clock = clock
        self._submit = submit
        self._waiting: list[Pending] = []
        self._oldest_at = 0.0
        self._changed = anyio.Event()
        self.urgent: Callable[[], bool] = lambda: False

    def wake(self) -> None:
        self._changed.set()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def add(self, pending: Pending) -> None:
        if not self._waiting:
            self._oldest_at = self._clock.now()
        self._waiting.append(pending)
        self._changed.set()

    async def run(self, group: anyio.abc.TaskGroup) -> None:
        """Forever: wait for a batch's worth, hand it to `submit` in its own task, go on collecting."""
        while True:
            await self._until_due()
            taken, self._waiting = self._waiting[: self._max_items], self._waiting[self._max_items:]
            if self._waiting:
                self._oldest_at = self._clock.now()  # the rest start their own wait
            if taken:
                group.start_soon(self._submit, taken)

    async def _until_due(self) -> None:
        while True:
            if len(self._waiting) >= self._max_items or (self._waiting and self.urgent()):
                return
            if self._waiting:
                remaining = self._oldest_at + self._wait_s - self._clock.now()
                if remaining <= 0:
                    return
                self._changed = anyio.Event()
                await first_of(functools.partial(self._clock.sleep, remaining), self._changed.wait)
            else:
                self._changed = anyio.Event()
                await self._changed.wait()

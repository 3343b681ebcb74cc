"""When a test set may start and how many of its episodes run at once.

Live, each test set runs at most TEST_EPISODES_IN_FLIGHT episodes at once. A test episode of a batching
model (`--batch tests`) waiting on its batch costs nothing locally (no slot, no connection), and a batch
is only as full as the episodes waiting, so that cap would starve the batches: such episodes are bounded
instead per model, run-wide, by the batch size (`max_items`; at least the live cap), which also bounds
the episodes held in memory. With `start = "after_serving"` their test sets wait until every serving
stream has finished, so all windows' test episodes advance turn by turn together: about one batch round
per turn (bench/batch_rounds.py measured it against starting each set as its window ends).
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

__all__ = ["TEST_EPISODES_IN_FLIGHT", "TestAdmission"]

TEST_EPISODES_IN_FLIGHT = 64
"""Per test set: enough to keep a provider busy, few enough to keep memory and journal batches small."""


class TestAdmission:
    def __init__(self, batched: Callable[[str], bool] = lambda model: False, max_items: int = 0,
                 start: str = "window") -> None:
        """`batched`: whether a stream's model batches its test calls."""
        self._batched = batched
        self._per_model = max(TEST_EPISODES_IN_FLIGHT, max_items)
        self._start = start
        self._limiters: dict[str, anyio.CapacityLimiter] = {}
        self._serving_left = 0
        self._all_served = anyio.Event()

    def serving_streams(self, count: int) -> None:
        """The run has `count` streams whose serving must end before an after-serving test set starts."""
        self._serving_left = count
        if count == 0:
            self._all_served.set()

    def served(self) -> None:
        """One stream's serving ended (done, stopped or failed)."""
        self._serving_left -= 1
        if self._serving_left <= 0:
            self._all_served.set()

    async def may_start(self, model: str) -> None:
        if self._start == "after_serving" and self._batched(model):
            await self._all_served.wait()

    def limiter(self, model: str) -> anyio.CapacityLimiter:
        """The bound on test episodes in flight for a new test set of `model`."""
        if not self._batched(model):
            return anyio.CapacityLimiter(TEST_EPISODES_IN_FLIGHT)
        if model not in self._limiters:
            self._limiters[model] = anyio.CapacityLimiter(self._per_model)
        return self._limiters[model]

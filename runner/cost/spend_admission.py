"""Whether a new episode may start under the run's cap: a cap buys finished episodes.

Every episode gets its start order (`begin`), which its calls carry (`EPISODE_AGE`): when room or call
slots are short, the oldest episode's calls go first. A new episode (a serving block, a test episode)
starts only while what is left under the cap pays, with a margin, for what the episodes in flight are
still expected to spend and for the new ones. An episode that has spent `s` so far is expected to spend
what the finished episodes that cost more than `s` spent beyond it, on average (the finished ones are
biased cheap: the short ones finish first, so a plain mean less `s` would under-count the long ones
still running); the method's own calls are spread over the finished episodes.
A new episode that does not fit waits for one in flight to end, and is refused only when none is in
flight and no other waiting start fits (a smaller one, a single test episode beside a serving block):
then nothing can change the estimate, and the run stops dispatching. Before any episode has
finished there is no estimate: as many episodes start as there are call slots (each then runs at full
speed, so the first finish soon), and none once a call has had to wait for room.
The room must also hold, beside that spend, what the episodes' calls in flight reserve beyond their cost
(`Budget.mean_gap`, one call per episode, at most `parallel` at once): without it the episodes near the
cap take turns for room, one call at a time, and a batched run waits out a batch's latency per turn.
A batched test episode (`--batch tests`) also needs `BATCH_TAIL` of the cap left unspent: see there.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter

import anyio

from runner.cost.budget import Budget

__all__ = ["BATCH_TAIL", "MARGIN", "SpendAdmission"]

MARGIN = 1.25
"""How much more than the expected spend the room must hold: episodes vary about their expectation (a
retail return of four items against one), and an episode left unfinished is money spent for nothing."""


BATCH_TAIL = 0.03
"""The share of the cap below which no batched test episode starts. A batch round can spend at most the
room left times an item's cost over its worst case (1/40 with 4,096 output tokens allowed and 100 used),
so near the cap each round buys a few episodes: on the mock, the last 2.5% of a 50% cap took 87 rounds
(each a batch's latency: minutes to hours at a provider) for 3% more episodes. A resume with a higher cap
goes on; a `--max-tokens` near the replies' length makes each round buy more."""


class SpendAdmission:
    def __init__(self, budget: Budget | None, first: int = 32, parallel: int | None = None) -> None:
        """`first`: how many episodes may run before one has finished (the run's call slots); `parallel`:
        the most calls in flight at once (the call slots; None: no bound, a batched run's items)."""
        self._budget = budget
        self._first = first
        self._parallel = parallel
        self._ages = itertools.count(1)
        self._in_flight: set[int] = set()
        self._costs: list[float] = []
        """What each finished episode spent, sorted."""
        self._above: list[float] = [0.0]
        """Suffix sums of `_costs`: `_above[i]` is the sum of `_costs[i:]` (rebuilt lazily)."""
        self._stale = False
        self._promised = 0
        """Episodes admitted and not yet begun (a block's, between its admission and its episodes)."""
        self._ended = anyio.Event()
        self._waiting: Counter[tuple[int, bool]] = Counter()
        """Admissions waiting, by how many episodes each would start and whether they are batched."""
        self._closed = False

    async def admit(self, count: int = 1, batched: bool = False) -> bool:
        """Wait until `count` new episodes fit beside the ones in flight: True; False when they do not
        fit and no episode is in flight to end, or once `close`d. `batched`: test episodes whose calls
        go in provider batches (`BATCH_TAIL`)."""
        start = (count, batched)
        while not self._closed and not self.fits(*start):
            if batched and self.in_batch_tail:
                return False  # spend only grows: waiting would not change it
            if not self._in_flight and not self._promised and not any(self.fits(*w) for w in self._waiting):
                self._wake()  # the others waiting look again: none of them fits either
                return False
            self._waiting[start] += 1
            try:
                await self._ended.wait()
            finally:
                self._waiting[start] -= 1
                if not self._waiting[start]:
                    del self._waiting[start]
        if self._closed:
            return False
        self._promised += count
        return True

    def withdraw(self, count: int) -> None:
        """Episodes admitted that will not start after all."""
        self._promised = max(0, self._promised - count)
        self._wake()

    def close(self) -> None:
        """The run is stopping: every admission waiting, and every later one, is refused."""
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        self._ended.set()
        self._ended = anyio.Event()

    def fits(self, count: int = 1, batched: bool = False) -> bool:
        budget = self._budget
        if budget is None:
            return True
        if batched and self.in_batch_tail:
            return False
        if not self._costs:
            return not budget.waited and len(self._in_flight) + self._promised + count <= max(self._first, count)
        overhead = budget.episode_spend(0) / len(self._costs)
        fresh = self._residual(0.0)  # most episodes in flight have spent nothing yet: one look-up for them
        owed = sum((self._residual(spent) if (spent := budget.episode_spend(age)) else fresh)
                   for age in self._in_flight)
        owed += len(self._in_flight) * overhead + (count + self._promised) * (fresh + overhead)
        calls = len(self._in_flight) + self._promised + count
        if self._parallel is not None:
            calls = min(calls, self._parallel)
        return budget.cap - budget.spent >= MARGIN * owed + calls * budget.mean_gap

    def _residual(self, spent: float) -> float:
        """What an episode that spent `spent` so far is expected to spend yet (see the module's note)."""
        costs = self._costs
        if self._stale:
            self._above = list(itertools.accumulate(reversed(costs), initial=0.0))[::-1]
            self._stale = False
        first = bisect.bisect_right(costs, spent)
        longer = len(costs) - first
        if not longer:  # longer than any finished one: expect about another average episode
            return self._above[0] / len(costs)
        return self._above[first] / longer - spent

    def begin(self) -> int:
        """A new episode's start order (its calls' `EPISODE_AGE`)."""
        self._promised = max(0, self._promised - 1)
        age = next(self._ages)
        self._in_flight.add(age)
        return age

    def ended(self, age: int, finished: bool) -> None:
        self._in_flight.discard(age)
        spent = self._budget.forget_episode(age) if self._budget is not None else 0.0
        if finished:
            bisect.insort(self._costs, spent)
            self._stale = True
        self._wake()

    def waiting(self, count: int, batched: bool = False) -> int:
        """Admissions of `count` episodes waiting now."""
        return self._waiting[(count, batched)]

    @property
    def in_batch_tail(self) -> bool:
        """Less than `BATCH_TAIL` of the cap is left unspent: no batched test episode starts."""
        budget = self._budget
        return budget is not None and budget.cap - budget.spent < BATCH_TAIL * budget.cap

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def expected_usd(self) -> float:
        """What a new episode is expected to spend (0 before one has finished)."""
        if not self._costs or self._budget is None:
            return 0.0
        return self._residual(0.0) + self._budget.episode_spend(0) / len(self._costs)

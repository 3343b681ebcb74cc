"""Whether a new episode may start under the run's cap: a cap buys finished episodes.

Every episode gets its start order (`begin`), which its calls carry to the budget (`EPISODE_AGE`): when
room is short the oldest episode's calls go first. A new episode (a serving block, a test episode)
starts only while what is left under the cap pays, with a margin, for what the episodes in flight are
still expected to spend (the mean of the finished ones, the method's own calls spread over them, less
what each spent so far) and for one more.
Before any episode has finished there is no mean: then episodes start until a call first has to wait
for room. Once one is refused, the run stops dispatching; the episodes in flight finish (their calls
wait for room as others settle) or end when nothing in flight can give room back.
"""

from __future__ import annotations

import itertools

from runner.cost.budget import Budget

__all__ = ["MARGIN", "SpendAdmission"]

MARGIN = 1.25
"""How much more than the expected spend the room must hold: episodes vary about their mean (a retail
return of four items against one), and an episode left unfinished is money spent for nothing."""


class SpendAdmission:
    def __init__(self, budget: Budget | None) -> None:
        self._budget = budget
        self._ages = itertools.count(1)
        self._in_flight: set[int] = set()
        self._finished = 0
        self._finished_spend = 0.0

    def may_start(self, count: int = 1) -> bool:
        """Whether `count` new episodes fit beside the ones in flight."""
        budget = self._budget
        if budget is None:
            return True
        if not self._finished:
            return not budget.waited
        mean = (self._finished_spend + budget.episode_spend(0)) / self._finished
        owed = sum(max(mean - budget.episode_spend(age), 0.0) for age in self._in_flight) + count * mean
        return budget.cap - budget.spent >= MARGIN * owed

    def begin(self) -> int:
        """A new episode's start order (its calls' `EPISODE_AGE`)."""
        age = next(self._ages)
        self._in_flight.add(age)
        return age

    def ended(self, age: int, finished: bool) -> None:
        self._in_flight.discard(age)
        spent = self._budget.forget_episode(age) if self._budget is not None else 0.0
        if finished:
            self._finished += 1
            self._finished_spend += spent

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

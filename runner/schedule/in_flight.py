"""A run-wide bound on live test episodes in flight, on top of each test set's own bound.

Each test set runs at most its own limiter's episodes at once, but every window of every stream has a
test set and, when serving is cheap (blind, oracle, the offline model), nearly all of them start at once:
the quickstart sweep had all 6,420 test episodes in flight together. Offline, episodes finish faster than
the journal's writer thread commits them, so finished episodes (their records, ~47 KB each) piled up
waiting on `Journal.commit`, and the run's RSS grew with the sweep (bench/memory_flat.py). A finished
episode holds its slot until its rows are committed, so this bound also bounds that backlog.

A batching model's test episodes are left out: a batch is only as full as the episodes waiting on it,
and those are bounded per model by the batch size already (runner.schedule.admission).
"""

from __future__ import annotations

from collections.abc import Collection

import anyio

__all__ = ["RUN_WIDE_TEST_EPISODES", "EpisodesInFlight"]

RUN_WIDE_TEST_EPISODES = 512
"""Several times the default call concurrency (64), so a live provider's call slots stay busy while
some episodes run their tools; few enough that episodes in flight cost tens of MB at most."""


class EpisodesInFlight:
    def __init__(self, bound: int = RUN_WIDE_TEST_EPISODES) -> None:
        self.limiter = anyio.CapacityLimiter(bound)
        self.peak = 0
        """The most episodes that held a run-wide slot at once (tests check the bound)."""

    def around(self, per_set: anyio.CapacityLimiter, model: str, batched: Collection[str] = ()) -> _Slot:
        """A test set's slots: its own limiter's, then a run-wide one unless `model` batches its tests."""
        return _Slot(per_set, self if model not in batched else None)


class _Slot:
    """`async with` it once per episode, from many tasks at once: each limiter knows its borrowers."""

    def __init__(self, per_set: anyio.CapacityLimiter, run_wide: EpisodesInFlight | None) -> None:
        self._per_set = per_set
        self._run_wide = run_wide

    async def __aenter__(self) -> None:
        await self._per_set.acquire()
        if self._run_wide is None:
            return
        try:
            await self._run_wide.limiter.acquire()
        except BaseException:
            self._per_set.release()
            raise
        self._run_wide.peak = max(self._run_wide.peak, int(self._run_wide.limiter.borrowed_tokens))

    async def __aexit__(self, *exc: object) -> None:
        if self._run_wide is not None:
            self._run_wide.limiter.release()
        self._per_set.release()

"""What a finished episode leaves in memory is bounded (issue 38, item 4): test episodes in flight are
bounded run-wide, not only per test set, and a finished episode's result is freed once its rows are
committed. The quickstart sweep once held every one of its 6,420 finished episodes at once."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from runner.journal import open_journal
from runner.schedule import engine as engine_module
from runner.schedule.episode import EpisodeResult
from runner.schedule.in_flight import EpisodesInFlight
from tests.fakes import ScriptModel, toy_decider, toy_scenario
from tests.runner.test_engine import context_of, create, make_engine, stream_of

BOUND = 8
WINDOWS, TESTS = 6, 20
"""Each window's test set alone is larger than the run-wide bound, and all of them fit their own limiter."""


class Alive:
    """Episode results not yet freed, counted from the moment their episode starts."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    def started(self) -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)

    def freed(self) -> None:
        self.now -= 1


async def test_episodes_in_flight_and_their_results_stay_within_the_run_wide_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alive = Alive()
    real = engine_module.run_episode

    async def counted(*args: Any, **kwargs: Any) -> EpisodeResult:
        alive.started()
        try:
            result = await real(*args, **kwargs)
        except BaseException:
            alive.freed()
            raise
        weakref.finalize(result, alive.freed)
        return result

    monkeypatch.setattr(engine_module, "run_episode", counted)
    scenario = toy_scenario(windows=WINDOWS, serving_per_window=1, test_per_window=TESTS)
    stream = stream_of(scenario)
    model = ScriptModel(toy_decider(lambda r: context_of(r)["best"]))
    in_flight = EpisodesInFlight(BOUND)
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        await make_engine(journal, model, 1, [], stream, concurrency=4 * TESTS, in_flight=in_flight).run([stream])
        done = await journal.fetchone("SELECT count(*) FROM episodes")
        gc.collect()
        # The engine, its progress and its journal are all still alive here: none keeps a finished episode.
        assert alive.now == 0
    assert done == (WINDOWS * (1 + TESTS),)
    assert in_flight.peak == BOUND  # the bound was reached, so it is what held the rest back
    assert alive.peak <= BOUND + 1  # the test episodes in their slots, and the one serving episode

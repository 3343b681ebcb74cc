"""The perfect-information stop of `bench.budget_caps`: what a cap could buy in the run's start order,
and in its finish order, counted by hand on three episodes."""

from __future__ import annotations

from bench.budget_caps import perfect_count
from runner.journal.analysis_queries import EpisodeFigures
from runner.journal.rows import ModelCallRow


def _episode(unit: str, started: float, finished: float) -> EpisodeFigures:
    return EpisodeFigures(unit, "m", "blind", "s", "test", 0, unit, "c", 0, 1.0, "replay", "finished", 1, 0, 0, 0, 0,
                          0.0, finished - started, finished)


def _call(unit: str, purpose: str, cost: float, at: float) -> ModelCallRow:
    return ModelCallRow("r", unit, "", purpose, "m", "", "ok", 1, False, 0, 0, 0, 0, cost, 0.1, at, "")


# A starts first and runs long ($3); B and C start after it and finish early ($1 each); a probe ($0.5)
# is made at 0.5 s, after A started and before B did.
EPISODES = [_episode("A", 0.0, 10.0), _episode("B", 1.0, 2.0), _episode("C", 1.5, 3.0)]
CALLS = [_call("A", "agent", 2.0, 4.0), _call("A", "agent", 1.0, 9.0), _call("B", "agent", 1.0, 2.0),
         _call("C", "agent", 1.0, 3.0), _call("probe", "probe", 0.5, 0.5)]


def test_the_start_order_takes_the_long_first_episode_first_and_the_probe_after_it() -> None:
    assert perfect_count(EPISODES, CALLS, 3.2, "started") == 1  # A ($3); the probe then B would pass $3.2
    assert perfect_count(EPISODES, CALLS, 4.5, "started") == 2  # A, the probe, B: exactly $4.5
    assert perfect_count(EPISODES, CALLS, 2.9, "started") == 0  # A alone does not fit


def test_the_finish_order_takes_the_short_ones_first() -> None:
    assert perfect_count(EPISODES, CALLS, 3.2, "finished") == 2  # the probe, B, C: $2.5
    assert perfect_count(EPISODES, CALLS, 5.4, "finished") == 2  # A would make it $5.5
    assert perfect_count(EPISODES, CALLS, 5.5, "finished") == 3

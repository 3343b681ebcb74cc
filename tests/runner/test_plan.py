from __future__ import annotations

from runner.config.plan import plan_streams, serving_blocks
from tests.fakes import toy_scenario


def test_blocks_restart_at_window_boundaries() -> None:
    scenario = toy_scenario(windows=2, serving_per_window=5)
    blocks = serving_blocks(scenario.serving, 3)
    assert [len(b) for b in blocks] == [3, 2, 3, 2]
    assert all(len({t.window for t in b}) == 1 for b in blocks)


def test_non_learning_methods_get_no_serving_stream_and_pilot_cuts_per_window() -> None:
    scenario = toy_scenario(windows=3, serving_per_window=5, test_per_window=4)
    streams = plan_streams(["m"], ["blind", "counting"], [scenario], learns=lambda n: n == "counting", pilot=2)
    blind, counting = streams
    assert blind.serving == () and len(blind.test) == 6
    assert len(counting.serving) == 6 and [t.window for t in counting.serving] == [0, 0, 1, 1, 2, 2]
    ids = [u.unit_id for s in streams for u in s.units()]
    assert len(ids) == len(set(ids))

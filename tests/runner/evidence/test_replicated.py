"""The noise floor's statistics: Student's t, the two-level bootstrap (and its coverage on simulated data,
a small version of bench/replica_coverage.py), the spread, flip rates and the MDE of replicated streams."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from bench.replica_coverage import REGIMES, coverage
from runner.stats.bootstrap import DEFAULT_SPEC, stream_draws
from runner.stats.noise import mde, noise_floor
from runner.stats.outcomes import Outcome, task_values
from runner.stats.replicated import stream_intervals
from runner.stats.stats import t_quantile


def outcome(replica: int, task: int, reward: float, scenario: str = "retail_l1",
            category: str = "hidden") -> Outcome:
    return Outcome(model="m", method="blind", scenario=scenario, task_id=f"t{task}", family=f"f{task % 5}",
                   category=category, window=task % 2, repeat=0, reward=reward, turns=1, tool_calls=1,
                   input_tokens=0, output_tokens=0, cost_usd=0.0, latency_s=0.0, replica=replica)


def test_t_quantiles_match_the_tables() -> None:
    assert t_quantile(0.975, 2) == pytest.approx(4.3027, abs=1e-4)
    assert t_quantile(0.975, 10) == pytest.approx(2.2281, abs=1e-4)
    assert t_quantile(0.8, 4) == pytest.approx(0.9410, abs=1e-4)
    assert t_quantile(0.025, 5) == pytest.approx(-2.5706, abs=1e-4)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.95996, abs=1e-5)


def test_one_replica_keeps_the_one_level_intervals_exactly() -> None:
    outcomes = [outcome(0, t, float(t % 3 == 0)) for t in range(40)]
    one = stream_draws(task_values(outcomes), DEFAULT_SPEC)
    assert stream_intervals(outcomes, DEFAULT_SPEC).avg_h_interval() == one.avg_h_interval()
    assert noise_floor(outcomes) is None


def test_replicas_that_disagree_widen_the_interval_and_show_their_spread() -> None:
    # Replica 2 solves every task, replicas 0 and 1 only every third: a serving stream's luck.
    outcomes = [outcome(k, t, 1.0 if k == 2 else float(t % 3 == 0)) for k in range(3) for t in range(40)]
    two = stream_intervals(outcomes, DEFAULT_SPEC).avg_h_interval()
    pooled = stream_draws(task_values(outcomes), DEFAULT_SPEC).avg_h_interval()
    assert two is not None and pooled is not None and two.hi - two.lo > 2 * (pooled.hi - pooled.lo)
    floor = noise_floor(outcomes)
    assert floor is not None and floor.replicas == 3
    assert floor.avg_h.by_replica == pytest.approx([35.0, 35.0, 100.0])
    assert floor.avg_h.min == pytest.approx(35.0) and floor.avg_h.max == pytest.approx(100.0)
    assert floor.avg_h.sd == pytest.approx(37.5278, abs=1e-3)
    # A task flips when its rewards differ between two replicas: 2 of 3 pairs for the 26 unsolved tasks.
    assert floor.tasks_flipping == pytest.approx(26 / 40)
    assert floor.flip_rate == pytest.approx(26 / 40 * 2 / 3)
    assert floor.least_stable[0].flip_rate == pytest.approx(2 / 3) and len(floor.least_stable) == 5
    assert floor.mde_avg_h == pytest.approx(mde(floor.avg_h.sd, 3))
    assert floor.notes  # 3 replicas: the SD itself is uncertain


def test_mde_of_two_streams_of_k_replicas() -> None:
    # The exact two-sample t test with 5 + 5 replicas detects 2.02444 SDs at 80% power (statsmodels'
    # TTestIndPower().solve_power(nobs1=5, alpha=0.05, power=0.8)); the shortcut t_8(0.975) + t_8(0.80)
    # gave (2.3060 + 0.8889) x sqrt(2 / 5) = 2.0206, 0.2% short. tests/runner/stats checks every K.
    assert mde(4.0, 5) == pytest.approx(4 * 2.024440, abs=1e-3)
    assert mde(4.0, 1) is None and mde(None, 5) is None


def test_two_level_intervals_cover_where_the_one_level_ones_do_not() -> None:
    """A small version of bench/replica_coverage.py: 60 seeds, 400 draws, replica noise dominating."""
    regime = next(r for r in REGIMES if r.name == "replica-dominated")
    two, one, two_width, one_width = coverage(replace(regime, families=10), 5, 60, replace(DEFAULT_SPEC, draws=400))
    assert two >= 0.88
    assert one <= 0.6
    assert two_width > one_width

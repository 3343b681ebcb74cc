"""The noise floor, power and the paired replica verdict against independent computations: statsmodels'
power solvers and its two-way ANOVA, numpy's SD, scipy's chi-square, and closed forms worked by hand on
small made-up replicated streams."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.power import TTestIndPower, TTestPower

from runner.stats.compare_replicas import replica_verdict
from runner.stats.noise import mde, noise_floor
from runner.stats.outcomes import Outcome
from runner.stats.power import predicted_sd, replicas_needed, setting_variances
from runner.stats.stats import f_quantile


def outcome(replica: int, task: int, reward: float, scenario: str = "retail_l1", method: str = "blind") -> Outcome:
    return Outcome(model="m", method=method, scenario=scenario, task_id=f"t{task}", family=f"f{task % 5}",
                   category="hidden", window=0, repeat=0, reward=reward, turns=1, tool_calls=1, input_tokens=0,
                   output_tokens=0, cost_usd=0.0, latency_s=0.0, replica=replica)


@pytest.mark.parametrize("replicas", (2, 3, 5, 10, 40))
def test_mde_is_the_difference_statsmodels_detects_at_80_percent(replicas: int) -> None:
    effect = TTestIndPower().solve_power(nobs1=replicas, alpha=0.05, power=0.8, ratio=1.0)
    assert mde(3.5, replicas) == pytest.approx(3.5 * effect, rel=1e-4)
    found = mde(3.5, replicas, power=0.9)
    assert found is not None and found / 3.5 == pytest.approx(
        TTestIndPower().solve_power(nobs1=replicas, alpha=0.05, power=0.9, ratio=1.0), rel=1e-4)


@pytest.mark.parametrize(("sd", "difference"), ((5.0, 4.0), (2.0, 6.0), (10.0, 3.0), (1.0, 0.9), (8.0, 8.0)))
def test_replicas_needed_is_the_first_k_statsmodels_gives_80_percent(sd: float, difference: float) -> None:
    power = TTestIndPower()
    expected = next(k for k in range(2, 1000) if power.power(difference / sd, nobs1=k, alpha=0.05, ratio=1.0) >= 0.8)
    assert replicas_needed(sd, difference) == expected


def test_the_paired_verdict_matches_a_paired_t_test_by_hand() -> None:
    """Four replicas of 10 tasks; A solves 8, 5, 7, 4 of them per replica index, B 7, 1, 0, 1: A's Avg H
    minus B's is +10, +40, +70, +30. SD by numpy (ddof 1), MDE and replicas needed by statsmodels'
    one-sample (paired) power."""
    solved_a, solved_b = (8, 5, 7, 4), (7, 1, 0, 1)
    a = [outcome(k, t, float(t < solved_a[k]), method="tabular") for k in range(4) for t in range(10)]
    b = [outcome(k, t, float(t < solved_b[k])) for k in range(4) for t in range(10)]
    diffs = np.array([10 * solved_a[k] - 10 * solved_b[k] for k in range(4)])
    verdict = replica_verdict(a, b, float(diffs.mean()), None)
    sd = float(np.std(diffs, ddof=1))
    assert verdict.replicas == 4 and verdict.sd_avg_h == pytest.approx(sd)
    assert verdict.mde_avg_h == pytest.approx(sd * TTestPower().solve_power(nobs=4, alpha=0.05, power=0.8), rel=1e-4)
    expected = next(k for k in range(2, 1000)
                    if TTestPower().power(diffs.mean() / sd, nobs=k, alpha=0.05) >= 0.8)
    assert verdict.needed == expected


def test_noise_floor_sd_flip_rate_and_sd_range_by_closed_forms() -> None:
    """Three replicas of 12 tasks with made-up rewards: SD of the replicas' H by numpy; a binary task solved
    by s of K replicas flips in s (K - s) of the K (K - 1) / 2 pairs; the SD's 95% range by scipy's
    chi-square, sqrt(chi2_q(K - 1) / (K - 1))."""
    rng = random.Random(5)
    table = [[float(rng.random() < 0.4 + 0.2 * k) for t in range(12)] for k in range(3)]
    floor = noise_floor([outcome(k, t, table[k][t]) for k in range(3) for t in range(12)])
    assert floor is not None and floor.replicas == 3
    scores = [100 * sum(row) / 12 for row in table]
    assert floor.avg_h.by_replica == pytest.approx(scores)
    assert floor.avg_h.sd == pytest.approx(float(np.std(scores, ddof=1)))
    rates = [(s := sum(table[k][t] for k in range(3))) * (3 - s) / 3 for t in range(12)]
    assert floor.flip_rate == pytest.approx(sum(rates) / 12)
    assert floor.tasks_flipping == pytest.approx(sum(r > 0 for r in rates) / 12)
    low, high = (math.sqrt(stats.chi2.ppf(q, 2) / 2) for q in (0.025, 0.975))
    assert f"x{low:.2f} to x{high:.2f}" in floor.notes[0]
    two = noise_floor([outcome(k, t, table[k][t]) for k in range(2) for t in range(12)])
    assert two is not None and "x0.03 to x2.24" in two.notes[0]  # df 1: sqrt(chi2 quantiles)


def anova(table: np.ndarray) -> tuple[float, float]:
    """(replica mean square, residual mean square) of a K x n table by statsmodels' two-way ANOVA."""
    k, n = table.shape
    frame = pd.DataFrame({"y": table.ravel(), "replica": np.repeat(np.arange(k), n), "task": np.tile(np.arange(n), k)})
    result = anova_lm(ols("y ~ C(replica) + C(task)", data=frame).fit())
    return (float(result.loc["C(replica)", "mean_sq"]), float(result.loc["Residual", "mean_sq"]))


@pytest.mark.parametrize("seed", (1, 2, 3))
def test_power_splits_the_variance_as_a_two_way_anova_does(seed: int) -> None:
    """per_task is the ANOVA's residual mean square; per_replica (MS_replica - MS_residual) / n where its F
    passes F(K - 1, (K - 1)(n - 1))'s 75th percentile, else 0; predicted_sd at the pilot's size gives
    back the SD of the replica scores."""
    rng = np.random.default_rng(seed)
    k, n = 6, 20
    shift = rng.normal(0, 0.15, k)[:, None]
    table = (rng.random((k, n)) < np.clip(0.5 + shift + rng.normal(0, 0.2, n)[None, :], 0, 1)).astype(float)
    (found,) = setting_variances([outcome(r, t, table[r, t]) for r in range(k) for t in range(n)], "hidden")
    ms_replica, ms_residual = anova(100 * table)
    assert found.tasks == n and found.per_task == pytest.approx(ms_residual, rel=1e-9)
    shows = ms_replica / ms_residual >= f_quantile(0.75, k - 1, (k - 1) * (n - 1))
    assert found.per_replica == pytest.approx((ms_replica - ms_residual) / n if shows else 0.0, rel=1e-9, abs=1e-9)
    if shows:
        assert predicted_sd([found], {}) == pytest.approx(float(np.std(100 * table.mean(axis=1), ddof=1)), rel=1e-9)


def test_a_per_replica_part_below_its_bar_pools_to_zero() -> None:
    """Replica scores that vary less than the residual predicts: F < its 75th percentile, pooled."""
    table = np.array([[1, 0, 1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1, 0, 1], [1, 1, 0, 0, 1, 1, 0, 0]], dtype=float)
    (found,) = setting_variances([outcome(r, t, table[r, t]) for r in range(3) for t in range(8)], "hidden")
    ms_replica, ms_residual = anova(100 * table)
    assert ms_replica / ms_residual < f_quantile(0.75, 2, 14)
    assert found.per_replica == 0.0 and found.per_task == pytest.approx(ms_residual)


def test_power_with_two_replicas_two_tasks_repeats_and_a_setting_without_complete_tasks() -> None:
    """K = 2 and n = 2 are enough for the split (ANOVA's mean squares again); repeats are averaged first; a
    setting none of whose tasks every replica finished is skipped, not the end of the list; the SD of Avg
    H over two settings is sqrt(the sum of their parts) / 2, and one task per setting counts as one."""
    table = np.array([[1.0, 0.0], [0.5, 1.0]])  # replica 1's task 0: two repeats, 0 and 1
    outcomes = [outcome(0, 0, 1.0), outcome(0, 1, 0.0), outcome(1, 0, 0.0), outcome(1, 1, 1.0)]
    outcomes += [replace_repeat(outcome(1, 0, 1.0), 1)]
    outcomes += [outcome(0, 7, 1.0, scenario="banking_l1")]  # replica 1 never finished it
    outcomes += [outcome(r, 9, float(r), scenario="retail_l2") for r in (0, 1)]
    found = {v.setting: v for v in setting_variances(outcomes, "hidden")}
    assert set(found) == {"retail_l1", "retail_l2"}
    ms_replica, ms_residual = anova(100 * table)
    assert found["retail_l1"].per_task == pytest.approx(ms_residual)
    assert found["retail_l2"].per_task == pytest.approx(5000.0)  # one task: its variance across replicas
    parts = [found["retail_l1"], found["retail_l2"]]
    expected = math.sqrt(sum(v.per_replica + v.per_task / 1 for v in parts)) / 2
    assert predicted_sd(parts, {"retail_l1": 1, "retail_l2": 1}) == pytest.approx(expected)


def replace_repeat(found: Outcome, repeat: int) -> Outcome:
    from dataclasses import replace
    return replace(found, repeat=repeat)

"""The one- and two-level bootstrap against independent computations, and their coverage on simulated data.

- The one-level family bootstrap's draws vary as the ideal bootstrap of a mean of F families does (the
  plug-in variance / F, a closed form), and its percentile interval is scipy.stats.bootstrap's of the
  family means (equal families: the same statistic, drawn by another generator).
- The two-level figure's variance is the two-way random-effects variance of the grand mean,
  (MS_replica + MS_family - MS_residual) / (K F), the mean squares from statsmodels' ANOVA.
- Coverage, seeded and small: in each variance regime of bench/replica_coverage.py the two-level Avg H
  interval holds the truth about 95% of the time; the one-level one does where one serving stream is all
  there is (no replica part).
- compare's pairing by replica index does not depend on the order the replicas were journaled in, and a
  replica missing on one side leaves the pairs of the others as they were.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm

from bench.replica_coverage import REGIMES, TRUTH, coverage, simulate
from runner.stats.bootstrap import DEFAULT_SPEC, BootstrapSpec, TaskValue, stream_draws
from runner.stats.compare_replicas import paired_intervals, replica_verdict
from runner.stats.outcomes import Outcome, StreamRef
from runner.stats.replicated import ReplicaValue, replica_draws

SPEC = BootstrapSpec(draws=20000, seed=3)


def family_tasks(means: list[float], per_family: int = 3, setting: str = "retail_l1") -> list[TaskValue]:
    """Families of equal size whose tasks score their family's mean give or take 5 (so means are exact)."""
    return [TaskValue(setting, f"{setting}-{f}-{i}", f"fam{f}", "hidden", 0, mean + 5.0 * (i - 1))
            for f, mean in enumerate(means) for i in range(per_family)]


def test_one_level_draws_vary_as_the_ideal_bootstrap_of_family_means() -> None:
    means = [10.0, 35.0, 40.0, 55.0, 60.0, 80.0, 95.0, 20.0]
    draws = stream_draws(family_tasks(means), SPEC).settings["retail_l1"][("hidden", None)]
    plug_in = float(np.var(means))  # the bootstrap's own population: ddof 0
    assert float(np.mean(draws)) == pytest.approx(np.mean(means), abs=0.5)
    assert float(np.var(draws)) == pytest.approx(plug_in / len(means), rel=0.05)


def test_one_level_percentile_interval_is_scipys_of_the_family_means() -> None:
    rng = random.Random(9)
    means = [rng.uniform(0, 100) for _ in range(25)]
    found = stream_draws(family_tasks(means), SPEC).setting_interval("retail_l1", ("hidden", None))
    reference = stats.bootstrap((np.array(means),), np.mean, n_resamples=20000, method="percentile",
                                confidence_level=0.95, random_state=np.random.default_rng(1)).confidence_interval
    assert found is not None
    width = reference.high - reference.low
    assert found.lo == pytest.approx(reference.low, abs=0.04 * width)
    assert found.hi == pytest.approx(reference.high, abs=0.04 * width)


def crossed(table: np.ndarray) -> list[ReplicaValue]:
    """A K x F table, one task per family, as replicated values of one setting."""
    k, f = table.shape
    return [ReplicaValue(r, TaskValue("retail_l1", f"t{j}", f"fam{j}", "hidden", 0, float(table[r, j])))
            for r in range(k) for j in range(f)]


@pytest.mark.parametrize(("sd_replica", "sd_family"), ((6.0, 3.0), (1.0, 10.0), (4.0, 6.0)))
def test_two_level_variance_is_the_random_effects_variance_of_the_grand_mean(sd_replica: float,
                                                                             sd_family: float) -> None:
    rng = np.random.default_rng(int(sd_replica * 10 + sd_family))
    k, f = 5, 12
    table = (50 + rng.normal(0, sd_replica, (k, 1)) + rng.normal(0, sd_family, (1, f))
             + rng.normal(0, 8.0, (k, f)))
    figure = replica_draws(crossed(table), SPEC, bounds=(-1e9, 1e9)).settings["retail_l1"][("hidden", None)]
    frame = pd.DataFrame({"y": table.ravel(), "replica": np.repeat(np.arange(k), f),
                          "family": np.tile(np.arange(f), k)})
    result = anova_lm(ols("y ~ C(replica) + C(family)", data=frame).fit())
    ms_r, ms_f, ms_e = (float(result.loc[row, "mean_sq"]) for row in ("C(replica)", "C(family)", "Residual"))
    expected = (ms_r + ms_f - ms_e) / (k * f)
    assert figure.point == pytest.approx(table.mean())
    assert figure.variance() == pytest.approx(expected, rel=0.06)
    assert figure.replica_variance() == pytest.approx(ms_r / (k * f), rel=0.06)


@pytest.mark.parametrize("regime", [r.name for r in REGIMES])
def test_two_level_interval_covers_the_truth_in_every_regime(regime: str) -> None:
    """80 seeds of 3 settings x 10 families x 4 tasks, 5 replicas, 400 draws: the 95% interval's
    coverage lands in a band around 95% (80 seeds: its own SE is 2.4 points)."""
    chosen = next(r for r in REGIMES if r.name == regime)
    two, _, _, _ = coverage(replace(chosen, families=10), 5, 80, replace(DEFAULT_SPEC, draws=400))
    assert 0.88 <= two <= 0.995


def test_one_level_interval_covers_one_serving_stream() -> None:
    """With no replica part (one serving stream is the whole truth), the family bootstrap of one replica
    covers: 100 seeds, family-dominated noise, 20 families, 400 draws."""
    regime = replace(next(r for r in REGIMES if r.name == "family-dominated"), sd_replica=0.0)
    spec = replace(DEFAULT_SPEC, draws=400)
    hits = 0
    for seed in range(100):
        values = [v.task for v in simulate(regime, 1, seed)]
        found = stream_draws(values, replace(spec, seed=spec.seed + seed)).avg_h_interval()
        assert found is not None
        hits += found.lo <= TRUTH <= found.hi
    assert 0.86 <= hits / 100 <= 0.995


def stream(method: str, replicas: list[int], solved: dict[int, int]) -> list[Outcome]:
    return [Outcome(model="m", method=method, scenario="retail_l1", task_id=f"t{t}", family=f"f{t % 4}",
                    category="hidden", window=t % 2, repeat=0, reward=float((t + 3 * k) % 10 < solved[k]), turns=1,
                    tool_calls=1, input_tokens=0, output_tokens=0, cost_usd=0.0, latency_s=0.0, replica=k)
            for k in replicas for t in range(16)]


def test_compare_pairs_replicas_by_index_whatever_order_they_were_journaled_in_and_with_one_missing() -> None:
    a_ref, b_ref = StreamRef("ra", "m", "tabular"), StreamRef("rb", "m", "blind")
    a = stream("tabular", [0, 1, 2, 3], {0: 7, 1: 5, 2: 8, 3: 6})
    b = stream("blind", [0, 1, 2, 3], {0: 4, 1: 5, 2: 3, 3: 5})
    spec = BootstrapSpec(draws=500, seed=4)
    in_order = paired_intervals(a_ref, a, b_ref, b, spec)
    shuffled_a, shuffled_b = a[:], b[:]
    random.Random(2).shuffle(shuffled_a)
    random.Random(3).shuffle(shuffled_b)
    again = paired_intervals(a_ref, shuffled_a, b_ref, shuffled_b, spec)
    assert in_order is not None and again is not None
    assert again.avg_h_interval() == in_order.avg_h_interval()
    assert replica_verdict(shuffled_a, shuffled_b, 10.0, None) == replica_verdict(a, b, 10.0, None)
    # B lost replica 2: the pairs are replicas 0, 1 and 3, exactly as if both had run only those.
    missing = [o for o in shuffled_b if o.replica != 2]
    kept = [o for o in a if o.replica != 2]
    assert paired_intervals(a_ref, shuffled_a, b_ref, missing, spec).avg_h_interval() == \
        paired_intervals(a_ref, kept, b_ref, missing, spec).avg_h_interval()  # type: ignore[union-attr]
    verdict = replica_verdict(shuffled_a, missing, 10.0, None)
    assert verdict.replicas == 3 and "(A has 4, B 3)" in verdict.text
    def score(found: list[Outcome], replica: int) -> float:
        return 100 * sum(o.reward for o in found if o.replica == replica) / 16

    per_replica = [score(a, k) - score(b, k) for k in (0, 1, 3)]
    assert verdict.sd_avg_h == pytest.approx(float(np.std(per_replica, ddof=1)))

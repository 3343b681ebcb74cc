"""The exact statistics (runner/stats/stats.py, t_power.py) against an independent reference: scipy's
distributions and statsmodels' interval, over grids that reach the edges (fractional and huge df, 0 and
n successes, one-sided tails). runner/stats computes them with its own series and bisections; a slip in
a continued fraction or a tail sum shows here as a digit that scipy does not have."""

from __future__ import annotations

import math

import pytest
from scipy import stats
from statsmodels.stats.power import TTestIndPower, TTestPower
from statsmodels.stats.proportion import proportion_confint

from runner.stats.stats import chi2_quantile, clopper_pearson, f_quantile, sign_test_p, t_quantile
from runner.stats.t_power import shift_for_power, t_test_power

DFS = (0.5, 1, 1.7, 2, 3, 4, 7.3, 12, 30, 200, 5000)
PS = (0.5, 0.6, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9995)


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_is_scipys(df: float) -> None:
    for p in PS:
        assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-8, abs=1e-9)
        assert t_quantile(1 - p, df) == pytest.approx(stats.t.ppf(1 - p, df), rel=1e-8, abs=1e-9)
    assert t_quantile(0.975, math.inf) == pytest.approx(stats.norm.ppf(0.975), rel=1e-12)


@pytest.mark.parametrize("df1", (1, 2, 4, 9.5, 30))
def test_f_quantile_is_scipys(df1: float) -> None:
    for df2 in (1, 3, 10, 63, 500):
        for p in (0.25, 0.5, 0.75, 0.95, 0.99):
            assert f_quantile(p, df1, df2) == pytest.approx(stats.f.ppf(p, df1, df2), rel=1e-8)


@pytest.mark.parametrize("df", DFS)
def test_chi2_quantile_is_scipys(df: float) -> None:
    for p in (0.001, 0.025, 0.25, 0.5, 0.75, 0.975, 0.999):
        assert chi2_quantile(p, df) == pytest.approx(stats.chi2.ppf(p, df), rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("n", (1, 2, 5, 11, 40, 120))
def test_sign_test_is_scipys_one_sided_binomial_test(n: int) -> None:
    for wins in range(n + 1):
        expected = stats.binomtest(wins, n, 0.5, alternative="greater").pvalue
        assert sign_test_p(wins, n - wins) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", (1, 2, 7, 25, 80, 300))
def test_clopper_pearson_is_statsmodels_beta_interval(n: int) -> None:
    for successes in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        for level in (0.8, 0.95, 0.99):
            lo, hi = proportion_confint(successes, n, alpha=1 - level, method="beta")
            found = clopper_pearson(successes, n, level)
            assert found[0] == pytest.approx(0.0 if successes == 0 else lo, abs=1e-9)
            assert found[1] == pytest.approx(1.0 if successes == n else hi, abs=1e-9)


@pytest.mark.parametrize(("n", "mean_below"), ((5, 0.995), (20, 0.985), (60, 0.975)))
def test_clopper_pearson_covers_at_least_its_level_for_every_p(n: int, mean_below: float) -> None:
    """The exact coverage, a sum of binomial probabilities, never falls below 95% (the interval's promise),
    and on average over p within a few points above it (0.990, 0.977, 0.968 at n = 5, 20, 60): an interval
    too wide by a slip in alpha would pass the first check only."""
    intervals = [clopper_pearson(k, n) for k in range(n + 1)]
    coverages = []
    for p in (i / 200 for i in range(1, 200)):
        coverages.append(sum(stats.binom.pmf(k, n, p) for k, (lo, hi) in enumerate(intervals) if lo <= p <= hi))
    assert min(coverages) >= 0.95 - 1e-9
    assert sum(coverages) / len(coverages) < mean_below


@pytest.mark.parametrize("df", (1, 2, 3, 5, 8, 18, 60, 400))
def test_t_test_power_is_scipys_noncentral_t(df: float) -> None:
    critical = stats.t.ppf(0.975, df)
    for shift in (0.0, 0.5, 1.0, 2.0, 2.8, 4.0, 8.0):
        expected = stats.nct.sf(critical, df, shift) + stats.nct.cdf(-critical, df, shift)
        if math.isnan(expected):
            continue  # scipy's noncentral t gives up far in the tail at df = 1
        assert t_test_power(shift, df) == pytest.approx(expected, abs=1e-4)
    assert t_test_power(0.0, df) == pytest.approx(0.05, abs=1e-4)  # no difference: the test's own level


@pytest.mark.parametrize("replicas", (2, 3, 4, 5, 8, 20, 60))
def test_the_shift_for_80_percent_power_is_statsmodels(replicas: int) -> None:
    """Two independent streams of K replicas (df 2(K - 1)) and K paired replicas (df K - 1): the shift in
    SDs statsmodels' power solvers find, and the power at it is 80% by scipy's noncentral t."""
    independent = TTestIndPower().solve_power(nobs1=replicas, alpha=0.05, power=0.8, ratio=1.0)
    assert shift_for_power(2 * (replicas - 1), 0.8) * math.sqrt(2 / replicas) == pytest.approx(independent, rel=1e-4)
    paired = TTestPower().solve_power(nobs=replicas, alpha=0.05, power=0.8)
    assert shift_for_power(replicas - 1, 0.8) / math.sqrt(replicas) == pytest.approx(paired, rel=1e-4)
    for power in (0.7, 0.9):
        df = replicas - 1
        shift, critical = shift_for_power(df, power), stats.t.ppf(0.975, df)
        assert stats.nct.sf(critical, df, shift) + stats.nct.cdf(-critical, df, shift) == pytest.approx(power, abs=1e-4)

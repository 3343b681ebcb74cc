"""The exact power of a two-sided t test, and the shift it needs for a given power: what an MDE rests on.

A t statistic of a true difference D has a noncentral t distribution: (Z + delta) / sqrt(V / df), Z
standard normal, V chi-square with df degrees of freedom, delta = D / (the difference's standard error).
Its two-sided test at `level` rejects with probability
    E_V[ Phi(delta - t* c) + Phi(-delta - t* c) ],  c = sqrt(V / df),  t* = t_df(1 - (1 - level) / 2),
taken here over c on a fine grid of its density. The shift that reaches 80% power is often written
t_df(0.975) + t_df(0.80); that shortcut ignores the spread of V and falls short at a few degrees of
freedom (at df = 1, a paired comparison of two replicas, its shift has 73% power, not 80%), so the MDE
of a handful of replicas is computed from the exact power instead.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

from runner.stats.stats import t_quantile

__all__ = ["shift_for_power", "t_test_power"]

_NODES = 800
"""Grid points over c's density: the power is within 1e-4 of scipy's noncentral t at every df (1e-5
near 80%, where the MDE is read; the tests compare both)."""
_PHI = NormalDist().cdf


def t_test_power(shift: float, df: float, level: float = 0.95) -> float:
    """P(a two-sided t test at `level` with `df` degrees of freedom rejects) when the true difference is
    `shift` standard errors."""
    critical = t_quantile(1 - (1 - level) / 2, df)
    if math.isinf(df):
        return _PHI(shift - critical) + _PHI(-shift - critical)
    return sum(weight * (_PHI(shift - critical * c) + _PHI(-shift - critical * c)) for c, weight in _chi_grid(df))


@lru_cache(maxsize=4096)
def shift_for_power(df: float, power: float, level: float = 0.95) -> float:
    """The true difference, in standard errors, that a two-sided t test at `level` detects with
    probability `power`: t_test_power inverted by bisection (it rises with the shift)."""
    if not 0.0 < power < 1.0:
        raise ValueError("power must be in (0, 1)")
    low, high = 0.0, 1.0
    while t_test_power(high, df, level) < power:
        low, high = high, high * 2.0
    for _ in range(100):
        middle = (low + high) / 2
        if t_test_power(middle, df, level) < power:
            low = middle
        else:
            high = middle
        if high - low < 1e-10:
            break
    return (low + high) / 2


@lru_cache(maxsize=256)
def _chi_grid(df: float) -> tuple[tuple[float, float], ...]:
    """Midpoints and weights (summing to 1) of c = sqrt(V / df)'s density, V ~ chi-square(df), over
    c's mean +- 14 SDs (SD about 1 / sqrt(2 df)), cut at 0."""
    spread = 14.0 / math.sqrt(2.0 * df)
    low, high = max(0.0, 1.0 - spread), 1.0 + spread
    step = (high - low) / _NODES
    half = df / 2.0
    constant = math.log(2.0) + half * math.log(half) - math.lgamma(half)
    points = [low + (i + 0.5) * step for i in range(_NODES)]
    densities = [math.exp(constant + (df - 1.0) * math.log(c) - half * c * c) for c in points]
    total = sum(densities)
    return tuple((c, d / total) for c, d in zip(points, densities, strict=True))

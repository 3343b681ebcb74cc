"""Small exact statistics: the sign test, the relative reduction r, pass^k, Clopper-Pearson, the median,
Student's t, F and chi-square quantiles.

Pure functions over plain numbers. Exact where exactness is cheap: the sign test sums binomial terms
with integer arithmetic, Clopper-Pearson inverts the exact binomial tail by bisection, and the t
quantile inverts the t distribution (a regularized incomplete beta, by its continued fraction) by
bisection, the chi-square's the regularized incomplete gamma (its series, or its continued fraction in the
upper tail), so no statistics library is needed and a hand computation gives the same digits (the tests
check them against scipy's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from statistics import NormalDist

__all__ = ["SOLVED", "chi2_quantile", "clopper_pearson", "median", "pass_hat_k", "relative_reduction", "sign_test_p",
           "f_quantile", "t_quantile", "win_tie_loss"]

SOLVED = 1.0
"""A try counts as solved for pass^k when its reward reaches this (binary domains: 1; pitch: full marks)."""


def win_tie_loss(pairs: Sequence[tuple[float, float]], tolerance: float = 1e-9) -> tuple[int, int, int]:
    """(wins, ties, losses) of the first value of each pair over the second."""
    wins = sum(1 for a, b in pairs if a - b > tolerance)
    losses = sum(1 for a, b in pairs if b - a > tolerance)
    return wins, len(pairs) - wins - losses, losses


def sign_test_p(wins: int, losses: int) -> float:
    """Exact one-sided sign test, ties already dropped: P(X >= wins) for X ~ Binomial(wins + losses, 1/2).

    9 wins, 2 losses: (C(11,9) + C(11,10) + C(11,11)) / 2^11 = 67 / 2048 = 0.0327. No pairs: 1.0.
    """
    if wins < 0 or losses < 0:
        raise ValueError("wins and losses are counts")
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(wins, n + 1))
    return float(Fraction(tail, 2**n))


def relative_reduction(base: float, treat: float) -> float:
    """r = (base - treat) / max(1, base): how much of the base the treatment removes. Meant for counts
    (tokens, turns, micro-dollars): max(1, .) keeps a near-zero base from blowing r up."""
    return (base - treat) / max(1.0, base)


def pass_hat_k(tries: Mapping[str, Sequence[float]], k: int) -> float | None:
    """pass^k: the share of tasks solved in all of their first k tries. Tasks with fewer than k tries
    are left out (not yet run); None when no task has k."""
    if k < 1:
        raise ValueError("k must be at least 1")
    eligible = [rewards[:k] for rewards in tries.values() if len(rewards) >= k]
    if not eligible:
        return None
    solved = sum(1 for rewards in eligible if all(reward >= SOLVED for reward in rewards))
    return solved / len(eligible)


def median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def clopper_pearson(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion. 0 of n gives a lower bound of 0,
    n of n an upper bound of 1; no trials gives (0, 1): nothing is known."""
    if not 0 <= successes <= trials:
        raise ValueError("successes must be between 0 and trials")
    if trials == 0:
        return 0.0, 1.0
    alpha = (1 - level) / 2
    lower = 0.0 if successes == 0 else _solve(lambda p: _upper_tail(successes, trials, p) - alpha)
    upper = 1.0 if successes == trials else _solve(lambda p: alpha - _lower_tail(successes, trials, p))
    return lower, upper


def _log_pmf(k: int, n: int, p: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def _lower_tail(x: int, n: int, p: float) -> float:
    """P(X <= x)."""
    return min(1.0, sum(math.exp(_log_pmf(k, n, p)) for k in range(0, x + 1)))


def _upper_tail(x: int, n: int, p: float) -> float:
    """P(X >= x)."""
    return min(1.0, sum(math.exp(_log_pmf(k, n, p)) for k in range(x, n + 1)))


def _solve(increasing: Callable[[float], float]) -> float:
    """The root in (0, 1) of a function that rises with p, by bisection to 1e-12."""
    low, high = 1e-15, 1 - 1e-15
    for _ in range(200):
        middle = (low + high) / 2
        if increasing(middle) < 0:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return (low + high) / 2


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with `df` degrees of freedom (any real df > 0); df = inf gives the
    normal's. t_quantile(0.975, 2) = 4.3027, t_quantile(0.975, 30) = 2.0423."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError("p must be in (0, 1) and df positive")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if math.isinf(df):
        return _normal_quantile(p)
    return _invert(lambda x: _t_cdf(x, df), p)


def f_quantile(p: float, df1: float, df2: float) -> float:
    """The p-quantile of the F distribution with (df1, df2) degrees of freedom, by bisection on its CDF,
    I_{d1 x / (d1 x + d2)}(d1 / 2, d2 / 2). f_quantile(0.95, 5, 10) = 3.3258."""
    if not 0.0 < p < 1.0 or not (df1 > 0 and df2 > 0):
        raise ValueError("p must be in (0, 1) and both df positive")

    return _invert(lambda x: _incomplete_beta(df1 * x / (df1 * x + df2), df1 / 2, df2 / 2), p)


def chi2_quantile(p: float, df: float) -> float:
    """The p-quantile of the chi-square with `df` degrees of freedom: P(df / 2, x / 2) = p, P the regularized
    lower incomplete gamma. chi2_quantile(0.025, 1) = 0.000982, chi2_quantile(0.975, 4) = 11.1433."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError("p must be in (0, 1) and df positive")
    return _invert(lambda x: _incomplete_gamma(df / 2, x / 2), p)


def _incomplete_gamma(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x): its series below x = a + 1, where it converges fast,
    else 1 - Q(a, x) with Q by its continued fraction (modified Lentz)."""
    if x <= 0.0:
        return 0.0
    front = math.exp(a * math.log(x) - x - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        for n in range(1, 1000):
            term *= x / (a + n)
            total += term
            if term < total * 1e-16:
                break
        return min(1.0, front * total)
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    result = d
    for n in range(1, 1000):
        numerator = -n * (n - a)
        b += 2.0
        d = numerator * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + numerator / c
        c = c if abs(c) > tiny else tiny
        result *= c * d
        if abs(c * d - 1.0) < 1e-16:
            break
    return max(0.0, 1.0 - front * result)


def _invert(cdf: Callable[[float], float], p: float) -> float:
    """The x >= 0 where a rising CDF reaches p: bracketed by doubling, then bisected to 1e-12."""
    low, high = 0.0, 1.0
    while cdf(high) < p:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2
        if cdf(middle) < p:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2


def _normal_quantile(p: float) -> float:
    return NormalDist().inv_cdf(p)


def _t_cdf(t: float, df: float) -> float:
    """P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2) / 2 with x = df / (df + t^2)."""
    return 1.0 - 0.5 * _incomplete_beta(df / (df + t * t), df / 2, 0.5)


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta I_x(a, b), by its continued fraction (modified Lentz), using the
    symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(1.0 - x, b, a)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * result / a

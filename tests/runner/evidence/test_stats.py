"""The exact statistics against hand computations."""

from __future__ import annotations

import math

import pytest

from runner.stats.stats import (
    clopper_pearson,
    median,
    pass_hat_k,
    relative_reduction,
    sign_test_p,
    win_tie_loss,
)


def test_sign_test_matches_the_hand_computation() -> None:
    # 9 wins, 2 losses, 3 ties: ties dropped, n = 11, P(X >= 9) = (55 + 11 + 1) / 2048.
    wins, ties, losses = win_tie_loss([(1.0, 0.0)] * 9 + [(0.0, 1.0)] * 2 + [(1.0, 1.0)] * 3)
    assert (wins, ties, losses) == (9, 3, 2)
    assert sign_test_p(wins, losses) == pytest.approx(67 / 2048)
    assert round(sign_test_p(wins, losses), 4) == 0.0327


def test_sign_test_edges() -> None:
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(0, 5) == 1.0
    assert sign_test_p(10, 0) == pytest.approx(1 / 1024)
    assert sign_test_p(5, 5) == pytest.approx(sum(math.comb(10, k) for k in range(5, 11)) / 1024)


def test_relative_reduction_guards_small_bases() -> None:
    assert relative_reduction(10, 7) == pytest.approx(0.3)
    assert relative_reduction(0, 0) == 0.0
    assert relative_reduction(0.5, 0) == 0.5  # max(1, base): a base under one is not blown up
    assert relative_reduction(4, 6) == pytest.approx(-0.5)


def test_pass_hat_k_matches_a_hand_count() -> None:
    tries = {"a": [1.0, 1.0, 1.0], "b": [1.0, 0.0, 1.0], "c": [0.0, 0.0, 0.0], "d": [1.0, 1.0, 0.0],
             "e": [1.0]}
    # k = 1: a, b, d, e solved on the first try (e has one try) -> 4 / 5.
    assert pass_hat_k(tries, 1) == pytest.approx(4 / 5)
    # k = 2: a and d solve both of the first two; b misses the second; e is left out -> 2 / 4.
    assert pass_hat_k(tries, 2) == pytest.approx(2 / 4)
    # k = 3: only a -> 1 / 4; a pitch reward short of full marks is not solved.
    assert pass_hat_k(tries, 3) == pytest.approx(1 / 4)
    assert pass_hat_k({"p": [0.99]}, 1) == 0.0
    assert pass_hat_k(tries, 4) is None


def test_clopper_pearson_known_values() -> None:
    # Reference values of the exact interval (beta quantiles).
    lo, hi = clopper_pearson(5, 10)
    assert lo == pytest.approx(0.18709, abs=1e-5)
    assert hi == pytest.approx(0.81291, abs=1e-5)
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(0.30850, abs=1e-5))
    assert clopper_pearson(10, 10) == (pytest.approx(0.69150, abs=1e-5), 1.0)
    assert clopper_pearson(0, 0) == (0.0, 1.0)


def test_median() -> None:
    assert median([]) is None
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 2.0, 3.0]) == 2.5

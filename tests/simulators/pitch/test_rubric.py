"""The rubric formula on hand-computed verdicts."""

from __future__ import annotations

import pytest

from simulators.domain import JudgeVerdict
from simulators.domains.pitch.rubric import distinct_claims, score_verdict, word_count

WEIGHTS = {"price": 2, "features": 1, "eco": -1, "buzz": -3, "popularity": 0}


def verdict(invented: tuple[str, ...] = (), **labels: str) -> JudgeVerdict:
    return JudgeVerdict(labels=labels, invented_claims=invented, judge="hand")


def test_full_coverage_and_nothing_else_scores_100() -> None:
    result = score_verdict(WEIGHTS, verdict(price="mentioned", features="mentioned"), 50)
    assert result.score == 100.0
    assert (result.liked_total, result.liked_mentioned) == (3, 3)


def test_coverage_is_weighted() -> None:
    assert score_verdict(WEIGHTS, verdict(price="mentioned"), 50).score == pytest.approx(100 * 2 / 3)
    assert score_verdict(WEIGHTS, verdict(features="mentioned"), 50).score == pytest.approx(100 / 3)


def test_neutral_mentions_cost_nothing() -> None:
    result = score_verdict(WEIGHTS, verdict(price="mentioned", features="mentioned", popularity="mentioned"), 50)
    assert result.score == 100.0


def test_each_disliked_touch_halves() -> None:
    result = score_verdict(WEIGHTS, verdict(price="mentioned", features="mentioned", eco="mentioned"), 50)
    assert result.score == pytest.approx(50.0)
    assert result.disliked_touched == 1


def test_red_line_multiplies_by_point_three() -> None:
    result = score_verdict(WEIGHTS, verdict(price="mentioned", features="mentioned", buzz="mentioned"), 50)
    assert result.score == pytest.approx(30.0)
    assert result.red_lines_touched == 1


def test_contradicting_a_red_line_counts_as_touch_and_contradiction() -> None:
    result = score_verdict(WEIGHTS, verdict(price="mentioned", features="mentioned", buzz="contradicted"), 50)
    assert result.score == pytest.approx(100 * 0.3 * 0.5)


def test_contradicting_a_liked_fact_loses_its_coverage_and_halves() -> None:
    result = score_verdict(WEIGHTS, verdict(price="contradicted", features="mentioned"), 50)
    assert result.score == pytest.approx(100 * (1 / 3) * 0.5)
    assert result.contradictions == 1


def test_invented_claims_halve_each_up_to_five() -> None:
    base = verdict(("waterproof",), price="mentioned", features="mentioned")
    assert score_verdict(WEIGHTS, base, 50).score == pytest.approx(50.0)
    many = verdict(tuple(f"claim {i}" for i in range(8)), price="mentioned", features="mentioned")
    assert score_verdict(WEIGHTS, many, 50).score == pytest.approx(100 * 0.5 ** 5)


def test_repeated_claims_count_once() -> None:
    repeated = verdict(("Waterproof!", "waterproof", " WATERPROOF "), price="mentioned", features="mentioned")
    assert score_verdict(WEIGHTS, repeated, 50).invented == 1
    assert distinct_claims(["a b", "A  b.", "c"]) == ["a b", "c"]


def test_over_ninety_words_caps_at_25() -> None:
    perfect = verdict(price="mentioned", features="mentioned")
    assert score_verdict(WEIGHTS, perfect, 90).score == 100.0
    capped = score_verdict(WEIGHTS, perfect, 91)
    assert capped.score == 25.0 and capped.over_word_cap
    assert score_verdict(WEIGHTS, verdict(features="mentioned"), 120).score == 25.0  # 33.3 capped
    below_cap = verdict(features="mentioned", eco="mentioned")
    assert score_verdict(WEIGHTS, below_cap, 120).score == pytest.approx(100 / 6)  # already under 25


def test_empty_pitch_and_nothing_liked_score_zero() -> None:
    assert score_verdict(WEIGHTS, verdict(price="mentioned"), 0).score == 0.0
    assert score_verdict({"eco": -1, "buzz": 0}, verdict(buzz="mentioned"), 50).score == 0.0


def test_unlabelled_items_count_as_not_addressed() -> None:
    assert score_verdict(WEIGHTS, verdict(), 50).score == 0.0


def test_word_count_splits_on_whitespace() -> None:
    assert word_count("  one two\nthree\tfour ") == 4
    assert word_count("") == 0


def test_unknown_labels_fail_closed() -> None:
    with pytest.raises(ValueError, match="'M'"):
        score_verdict(WEIGHTS, verdict(price="M"), 50)

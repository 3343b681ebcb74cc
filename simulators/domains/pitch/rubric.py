"""The pitch rubric: a judge's labels and the hidden weights -> a score out of 100.

    score = 100 x (liked weight mentioned / total liked weight)
                x 0.5 ^ (disliked items mentioned or contradicted)
                x 0.3 ^ (red-line items mentioned or contradicted)
                x 0.5 ^ (contradicted items)
                x 0.5 ^ min(5, distinct invented claims)

A pitch over 90 words is capped at 25; an empty pitch, or a sheet with nothing the customer likes,
scores 0. Kept apart from any judge so that an LLM verdict is scored exactly like the offline one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from simulators.domain import JudgeVerdict
from simulators.protocol import JSON

__all__ = [
    "MENTIONED",
    "CONTRADICTED",
    "NOT_ADDRESSED",
    "LABELS",
    "RubricScore",
    "distinct_claims",
    "score_verdict",
    "word_count",
]

MENTIONED, CONTRADICTED, NOT_ADDRESSED = "mentioned", "contradicted", "not_addressed"
LABELS = (MENTIONED, CONTRADICTED, NOT_ADDRESSED)

DISLIKE_FACTOR = 0.5
RED_LINE_FACTOR = 0.3
CONTRADICTION_FACTOR = 0.5
INVENTION_FACTOR = 0.5
INVENTION_CAP = 5
WORD_CAP = 90
OVER_CAP_SCORE = 25.0
RED_LINE = -3
"""Weights at or below this are red lines; weights between it and 0 are dislikes."""


@dataclass(frozen=True)
class RubricScore:
    score: float
    """0 .. 100, after the word cap."""
    coverage: float
    liked_total: int
    liked_mentioned: int
    disliked_touched: int
    red_lines_touched: int
    contradictions: int
    invented: int
    word_count: int
    over_word_cap: bool

    def as_details(self) -> dict[str, JSON]:
        return asdict(self)


def word_count(pitch: str) -> int:
    return len(pitch.split())


def distinct_claims(claims: Sequence[str]) -> list[str]:
    """Claims with repeats removed (case, punctuation and spacing ignored), order kept: a judge
    quoting one claim twice must not double its penalty."""
    kept: list[str] = []
    seen: set[str] = set()
    for claim in claims:
        key = " ".join(re.sub(r"[^a-z0-9 ]", "", claim.casefold()).split())
        if key and key not in seen:
            seen.add(key)
            kept.append(claim)
    return kept


def score_verdict(weights: Mapping[str, int], verdict: JudgeVerdict, words: int) -> RubricScore:
    """Score a verdict. `weights` maps each sheet attribute to the customer's weight for the value
    the sheet states; an attribute the verdict does not label counts as not addressed."""
    labels = {attribute: verdict.labels.get(attribute, NOT_ADDRESSED) for attribute in weights}
    unknown = sorted({label for label in labels.values() if label not in LABELS})
    if unknown:
        # Fail closed: reading an unexpected label as "not addressed" would silently under-score.
        raise ValueError(f"judge {verdict.judge!r} returned label(s) {unknown}; expected one of {list(LABELS)}")
    touched = {attribute for attribute, label in labels.items() if label in (MENTIONED, CONTRADICTED)}
    liked_total = sum(w for w in weights.values() if w > 0)
    liked_mentioned = sum(w for a, w in weights.items() if w > 0 and labels[a] == MENTIONED)
    disliked = sum(1 for a in touched if RED_LINE < weights[a] < 0)
    red_lines = sum(1 for a in touched if weights[a] <= RED_LINE)
    contradictions = sum(1 for label in labels.values() if label == CONTRADICTED)
    invented = min(INVENTION_CAP, len(distinct_claims(verdict.invented_claims)))
    coverage = liked_mentioned / liked_total if liked_total else 0.0
    score = (100.0 * coverage * DISLIKE_FACTOR ** disliked * RED_LINE_FACTOR ** red_lines
             * CONTRADICTION_FACTOR ** contradictions * INVENTION_FACTOR ** invented)
    if words > WORD_CAP:
        score = min(score, OVER_CAP_SCORE)
    if words == 0:
        score = 0.0
    return RubricScore(score, coverage, liked_total, liked_mentioned, disliked, red_lines, contradictions,
                       invented, words, words > WORD_CAP)

"""Slices of a stream's test episodes: descriptive only.

Mean score and count by tool-call count, trajectory length (turns), family, window and category. No
intervals and no tests: a slice is chosen after looking, so it describes where scores come from and
never decides anything (gates and comparisons do that on the pre-declared figures).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from runner.stats.outcomes import Outcome

__all__ = ["BUCKETS", "DIMENSIONS", "SliceRow", "slices"]

BUCKETS = ((0, 2), (3, 5), (6, 10), (11, 20), (21, None))
"""Count buckets for tool calls and turns: short, typical, long, very long, runaway."""


@dataclass(frozen=True)
class SliceRow:
    bucket: str
    n: int
    score: float
    """Mean reward x 100."""


def _bucket(count: int) -> str:
    for low, high in BUCKETS:
        if high is None or count <= high:
            return f"{low}+" if high is None else f"{low}-{high}"
    raise AssertionError("unreachable")


DIMENSIONS: dict[str, Callable[[Outcome], str]] = {
    "tool_calls": lambda o: _bucket(o.tool_calls),
    "turns": lambda o: _bucket(o.turns),
    "family": lambda o: f"{o.scenario}:{o.family or '-'}",
    "window": lambda o: f"{o.scenario}:w{o.window}",
    "category": lambda o: o.category,
}


def slices(outcomes: Iterable[Outcome]) -> dict[str, list[SliceRow]]:
    """Per dimension, its buckets in a stable order, each with its count and mean score."""
    kept = list(outcomes)
    result: dict[str, list[SliceRow]] = {}
    for dimension, key in DIMENSIONS.items():
        groups: dict[str, list[float]] = defaultdict(list)
        for outcome in kept:
            groups[key(outcome)].append(outcome.reward)
        result[dimension] = [SliceRow(bucket, len(rewards), 100 * sum(rewards) / len(rewards))
                             for bucket, rewards in sorted(groups.items(), key=lambda item: _order(item[0]))]
    return result


def _order(bucket: str) -> tuple[int, str]:
    head = bucket.split("-")[0].rstrip("+")
    return (int(head), bucket) if head.isdigit() else (0, bucket)

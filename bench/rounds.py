"""Medians over interleaved rounds: the benchmarks that repeat each case print one row per round, then
one row per case with the median of each figure and every round's load, so noise stays visible."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

__all__ = ["medians_by"]


def medians_by(rows: Sequence[dict[str, Any]], key: str, figures: Sequence[str]) -> list[dict[str, Any]]:
    """One row per value of `key` (first-seen order): the median of each figure over its rounds (rounds
    that did not measure it, None, left out; a figure no round measured left out) and the rounds' 1-minute
    loads."""
    out = []
    for value in dict.fromkeys(row[key] for row in rows):
        mine = [row for row in rows if row[key] == value]
        medians = {name: statistics.median(row[name] for row in mine if row[name] is not None)
                   for name in figures if any(row[name] is not None for row in mine)}
        out.append({key: value, **medians, "load_1m": [row["load_1m"] for row in mine]})
    return out

"""What a cap buys of a projected sweep, said before the money is spent (`estimate --budget`, the pilot).

A capped run starts an episode only while the money left pays for it beside those in flight, so the
cap buys about its share of the projected sweep's episodes (bench/budget_caps.py measured the finished
ones at 92% or more of what the cap could pay for, on the mock). Streams run side by side, each window
by window, so that share is about the first windows of every stream, not whole streams.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.common.money import usd
from runner.cost.projection import ProjectedRow

__all__ = ["cap_buys"]


def cap_buys(rows: Sequence[ProjectedRow], cap: float, windows: int, what: str = "cap") -> str:
    """One sentence: how many of the projected episodes (and windows of each stream) `cap` pays for.
    `what`: how the money is named ('cap', 'the money left')."""
    cost = sum(r.projected_usd if r.batched_usd is None else r.batched_usd for r in rows)
    episodes = sum(r.episodes for r in rows)
    if cost <= 0 or cap >= cost:
        return f"The {usd(cap)} {what} pays for the whole projected sweep ({episodes:,} episodes, {usd(cost)})."
    share = cap / cost
    bought = int(share * episodes)
    first = int(share * windows)
    reach = (f"about the first {first} of each stream's {windows} windows" if first else
             f"less than the first of each stream's {windows} windows")
    return (f"The {usd(cap)} {what} buys about {bought:,} of the projected sweep's {episodes:,} episodes "
            f"({100 * share:.0f}% of {usd(cost)}): {reach}.")

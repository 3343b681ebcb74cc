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


def cap_buys(rows: Sequence[ProjectedRow], cap: float, windows: Sequence[int], what: str = "cap") -> str:
    """One sentence: how many of the projected episodes (and windows of each stream) `cap` pays for.
    `windows`: each stream's window count; `what`: how the money is named ('cap', 'the money left')."""
    cost = sum(r.projected_usd if r.batched_usd is None else r.batched_usd for r in rows)
    episodes = sum(r.episodes for r in rows)
    if cost <= 0 or cap >= cost:
        return f"The {usd(cap)} {what} pays for the whole projected sweep ({episodes:,} episodes, {usd(cost)})."
    share = cap / cost
    return (f"The {usd(cap)} {what} buys about {int(share * episodes):,} of the projected sweep's {episodes:,} "
            f"episodes ({100 * share:.0f}% of {usd(cost)}): {_reach(share, windows)}.")


def _reach(share: float, windows: Sequence[int]) -> str:
    """How far into its windows each stream gets (streams of unequal length each get their share)."""
    counts = sorted(set(windows))
    if len(counts) == 1:
        first = int(share * counts[0])
        return (f"about the first {first} of each stream's {counts[0]} windows" if first else
                f"less than the first of each stream's {counts[0]} windows")
    return (f"about the first {100 * share:.0f}% of each stream's windows (streams have "
            f"{counts[0]} to {counts[-1]})")

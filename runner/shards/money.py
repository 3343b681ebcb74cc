"""A sweep's budget across its shards: each shard a hard cap of its own, in proportion to its projected cost.

No shard can see another's spend (they may run on different machines, each with its own journal), so
the sweep's cap is kept by keeping every part under its share: shard i's cap is the budget times its
projected cost over the sweep's, rounded down to a micro-dollar, so the caps never add up to more than
the budget. Without any priced cost to go by (free or unpriced models), the shares follow projected
turns instead. Each shard runs under its cap exactly as a one-process run under `--budget`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from runner.common.tables import text_table
from runner.shards.split import Split

__all__ = ["caps_by_weight", "render_split", "shard_caps"]

_MICRO = 1_000_000


def shard_caps(budget: float | None, split: Split) -> list[float | None]:
    return caps_by_weight(budget, split.cost_usd, split.turns)


def caps_by_weight(budget: float | None, cost_usd: Sequence[float], turns: Sequence[int]) -> list[float | None]:
    """Each shard's cap from its projected cost (or turns, with nothing priced): what a shard records
    of the split is enough for `journal merge` to recompute every cap and check the one it ran under."""
    if budget is None:
        return [None] * len(turns)
    weights: Sequence[float] = cost_usd if sum(cost_usd) > 0 else [float(t) for t in turns]
    total = sum(Fraction(w) for w in weights)
    if total == 0:
        weights, total = [1.0] * len(turns), Fraction(len(turns))
    return [float(int(Fraction(budget) * Fraction(w) / total * _MICRO)) / _MICRO for w in weights]


def render_split(split: Split, caps: Sequence[float | None], index: int, sweep_id: str,
                 budget: float | None) -> str:
    """Every shard's cells, projected work and cap, this process's row marked: printed before any call."""
    total_turns = sum(split.turns) or 1
    rows = [[("> " if shard == index else "  ") + f"{shard}/{split.count}", str(len(split.streams_of(shard))),
             f"{split.turns[shard]:,}", f"{100 * split.turns[shard] / total_turns:.1f}%",
             f"{split.cost_usd[shard]:,.2f}", "-" if caps[shard] is None else f"{caps[shard]:,.6f}"]
            for shard in range(split.count)]
    mean = total_turns / split.count
    head = (f"Sweep {sweep_id}: {len(split.assignment)} cells over {split.count} shards; this is shard "
            f"{index}/{split.count}. Busiest shard {100 * split.imbalance:.1f}% above the mean of {mean:,.0f} "
            "projected turns.")
    cap_line = ("No budget: shards run uncapped." if budget is None else
                f"Budget ${budget:,.2f} split by projected cost into per-shard hard caps (sum "
                f"${sum(c or 0.0 for c in caps):,.6f}).")
    table = text_table(["shard", "cells", "projected turns", "share", "projected $", "cap $"], rows, "lrrrrr")
    return "\n".join([head, table, cap_line])

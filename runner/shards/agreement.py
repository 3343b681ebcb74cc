"""What `journal merge` checks the shards agree on beyond their sweep's id: money and every recorded setting.

The sweep's id covers what decides results (the config hash, the dataset, the shard count), not how
dear or how fast a shard ran: shards started with different `--budget`s share one sweep id, and each
ran under a share of its own budget, so a merge of them would report one sweep's cap while its shards'
caps add up to another's. So every shard must record the same sweep budget, must have run under its
own share of it (the cap `runner.shards.money` gives its index, recomputed here from the split the
shard recorded; a `resume --budget` of one shard changes its cap and is caught), and must have run
with the same stored settings (concurrency, prices, retries, ...) but for the two that differ by design:
its budget (its cap) and its journal. `--allow-mixed-settings` merges them anyway; the merged run's cap
is then the sum of the caps the shards really ran under, each shown beside its spend in the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from runner.common.money import usd
from runner.shards.inputs import ShardInput
from runner.shards.money import caps_by_weight
from simulators.errors import ShiftbenchInputError

__all__ = ["MIXED_FLAG", "check_shards_agree", "sweep_budget"]

MIXED_FLAG = "--allow-mixed-settings"
_PER_SHARD = ("budget", "journal")
"""Stored settings that differ between shards by design: each one's cap, each one's journal."""


def check_shards_agree(shards: Sequence[ShardInput], allow_mixed: bool) -> None:
    if allow_mixed:
        return
    first = shards[0]
    for shard in shards:
        _check_sweep_budget(shard, first)
        _check_own_cap(shard)
        _check_settings(shard, first)


def sweep_budget(shards: Sequence[ShardInput]) -> float | None:
    """The merged run's cap: the sweep's budget when the shards agree on it, else (mixed settings
    merged) what the shards' caps add up to; None when any shard ran uncapped."""
    budgets = {shard.record.sweep_budget_usd for shard in shards}
    if len(budgets) == 1 and all(shard.run.budget_usd == shard.record.cap_usd for shard in shards):
        return budgets.pop()
    caps = [shard.run.budget_usd for shard in shards]
    return None if any(cap is None for cap in caps) else sum(cap for cap in caps if cap is not None)


def _refuse(what: str) -> ShiftbenchInputError:
    return ShiftbenchInputError(f"journal merge: {what}; run every shard with the sweep's settings (the same command "
                                f"again continues a shard with the settings it is given), or pass {MIXED_FLAG}")


def _money(value: float | None) -> str:
    return "no budget" if value is None else f"the budget {usd(value)}"


def _cap(value: float | None) -> str:
    return "none" if value is None else f"${value:,.6f}"


def _check_sweep_budget(shard: ShardInput, first: ShardInput) -> None:
    if shard.record.sweep_budget_usd != first.record.sweep_budget_usd:
        raise _refuse(f"{shard.name} was started with {_money(shard.record.sweep_budget_usd)} for the sweep, but "
                      f"{first.name} with {_money(first.record.sweep_budget_usd)}, so their caps are shares of "
                      "different budgets")


def _check_own_cap(shard: ShardInput) -> None:
    record = shard.record
    share = caps_by_weight(record.sweep_budget_usd, record.cost_usd, record.turns)[record.index]
    if record.cap_usd != share or shard.run.budget_usd != share:
        ran = shard.run.budget_usd
        raise _refuse(f"{shard.name} ran under a cap of {_cap(ran)}, but its share of the sweep's "
                      f"{_money(record.sweep_budget_usd)} is {_cap(share)}")


def _check_settings(shard: ShardInput, first: ShardInput) -> None:
    mine, theirs = _settings(shard), _settings(first)
    for key in sorted(mine.keys() | theirs.keys()):
        if mine.get(key) != theirs.get(key):
            raise _refuse(f"{shard.name} ran with {key} = {_shown(mine.get(key))}, but {first.name} with "
                          f"{key} = {_shown(theirs.get(key))}")


def _settings(shard: ShardInput) -> dict[str, Any]:
    stored: dict[str, Any] = orjson.loads(shard.run.config)
    return {key: value for key, value in stored.items() if key not in _PER_SHARD}


def _shown(value: Any) -> str:
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= 60 else text[:57] + "..."

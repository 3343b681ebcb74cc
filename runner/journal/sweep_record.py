"""What a shard journals about itself, and what a merged journal records about the sweep it joined.

Each shard's run carries, under the meta key `shard:<run id>`, the sweep's id, its index and count,
the config hash and dataset fingerprint it ran, the whole sweep's streams in plan order with the shard
each one belongs to, the projected work and cost of every shard, the sweep's budget and its own cap:
enough for `journal merge` to tell which journals are parts of one sweep, put their units back in the
sweep's order, and name the parts that are missing. A merged journal holds one run, the sweep, whose
`sweep:<run id>` record lists the shards merged and the ones missing.

The sweep's id is derived from what decides its results and its split (config hash, dataset
fingerprint, shard count), so every shard computes it alone and the same command run again (a
requeued array task) finds its own run; `--sweep NAME` names a sweep instead.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from simulators.errors import ShiftbenchInputError

__all__ = ["SHARD_PREFIX", "SWEEP_PREFIX", "MergedShard", "MissingShard", "ShardRecord", "SweepRecord",
           "check_sweep_name", "shard_meta_key", "shard_run_id", "sweep_id_of", "sweep_meta_key"]

SHARD_PREFIX = "shard:"
SWEEP_PREFIX = "sweep:"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def shard_meta_key(run_id: str) -> str:
    return f"{SHARD_PREFIX}{run_id}"


def sweep_meta_key(run_id: str) -> str:
    return f"{SWEEP_PREFIX}{run_id}"


def check_sweep_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ShiftbenchInputError(f"--sweep {name!r}: a sweep name is 1 to 64 letters, digits, '.', '_' or '-', "
                                   "starting with a letter or digit")
    return name


def sweep_id_of(config_hash: str, dataset_fingerprint: str, count: int, name: str = "") -> str:
    if name:
        return check_sweep_name(name)
    digest = hashlib.sha256(f"{config_hash}|{dataset_fingerprint}|{count}".encode()).hexdigest()
    return f"sw-{digest[:12]}"


def shard_run_id(sweep_id: str, index: int, count: int) -> str:
    return f"{sweep_id}-shard{index}of{count}"


@dataclass(frozen=True)
class ShardRecord:
    sweep_id: str
    index: int
    count: int
    run_id: str
    config_hash: str
    dataset_fingerprint: str
    code_version: str
    streams: list[str]
    """Every stream of the sweep, in plan order."""
    assignment: list[int]
    """The shard of each stream of `streams`."""
    turns: list[int]
    """Projected model turns of each shard."""
    cost_usd: list[float]
    """Projected spend of each shard (the cap's share)."""
    sweep_budget_usd: float | None
    cap_usd: float | None
    """This shard's own hard cap: its share of the sweep's budget."""
    host: str = ""
    """The machine that last ran it (for a journal from before leases, `merge` can only judge a writer of
    this machine; the run's lease says more); never copied into a merged journal."""

    def own_streams(self) -> list[str]:
        return [s for s, owner in zip(self.streams, self.assignment, strict=True) if owner == self.index]

    def to_json(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def from_json(cls, text: str) -> ShardRecord:
        raw: dict[str, Any] = orjson.loads(text)
        return cls(**{name: raw[name] for name in cls.__dataclass_fields__ if name in raw})


@dataclass(frozen=True)
class MergedShard:
    index: int
    run_id: str
    journal: str
    status: str
    stop_reason: str
    cap_usd: float | None
    spent_usd: float
    units_done: int
    units_planned: int


@dataclass(frozen=True)
class MissingShard:
    index: int
    streams: list[str]
    """The sweep's streams no merged journal holds (those the split gave this shard)."""


@dataclass(frozen=True)
class SweepRecord:
    sweep_id: str
    count: int
    budget_usd: float | None
    shards: list[MergedShard]
    missing: list[MissingShard] = field(default_factory=list)
    incomplete: list[int] = field(default_factory=list)
    """Merged shards that had not finished (`--allow-partial`): their pending units stay pending."""

    @property
    def spent_usd(self) -> float:
        return sum(shard.spent_usd for shard in self.shards)

    @property
    def partial(self) -> bool:
        return bool(self.missing or self.incomplete)

    def to_json(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def from_json(cls, text: str) -> SweepRecord:
        raw: dict[str, Any] = orjson.loads(text)
        return cls(sweep_id=raw["sweep_id"], count=int(raw["count"]), budget_usd=raw.get("budget_usd"),
                   shards=[MergedShard(**shard) for shard in raw.get("shards", [])],
                   missing=[MissingShard(**missing) for missing in raw.get("missing", [])],
                   incomplete=[int(i) for i in raw.get("incomplete", [])])

"""`shiftbench journal merge OUT PATH...`: the shards of one sweep joined into one journal, or nothing.

The journals named must hold shards of one sweep: the same config hash, dataset fingerprint, sweep id
and shard count, the same sweep budget, caps and settings (`runner.shards.agreement`), each shard once,
none still being written (a live lease, on any host: `runner.schedule.lease_keeper`; a shard whose host
died is free once its lease lapses). A stream two journals both hold (a split another version computed)
is taken once, after every unit both journaled is checked to be the same episode. Missing shards and
shards that did not finish are refused unless `--allow-partial`; the merged run then says which. Every
refusal is one line, exit 2, and OUT is not created: the merge is written to a temporary file beside
OUT and linked into place only when whole.

The merged journal holds one run, the sweep, under its sweep id: config (with the sweep's budget),
config hash, dataset and units in plan order as a one-process run of the same sweep journals them, so
`report`, `compare`, `verify` and `export` read it as they read that run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import orjson

from runner.common.files import creating, location_problem
from runner.journal import RunRow
from runner.journal.media import no_side_files_left
from runner.journal.merge import MergeSource, unit_results, write_merged
from runner.journal.sweep_record import MergedShard, MissingShard, SweepRecord, sweep_meta_key
from runner.shards.agreement import check_shards_agree, sweep_budget
from runner.shards.inputs import ShardInput, read_inputs
from simulators.errors import ShiftbenchInputError

__all__ = ["MergeOutcome", "merge_shards"]


@dataclass(frozen=True)
class MergeOutcome:
    out: Path
    sweep: SweepRecord
    episodes: int


async def merge_shards(out: Path, paths: Sequence[Path], allow_partial: bool = False,
                       say: Callable[[str], None] = print, allow_mixed: bool = False) -> MergeOutcome:
    _check_out(out)
    with no_side_files_left(paths):  # the sources are read, never written: nothing left beside them
        shards = await read_inputs([Path(p) for p in paths])
        _check_one_sweep(shards)
        _check_not_written(shards)
        check_shards_agree(shards, allow_mixed)
        chosen = await anyio.to_thread.run_sync(_choose_sources, shards)
        sweep = _sweep_record(shards, chosen)
        _check_complete(sweep, shards, allow_partial)
        run = _merged_run(shards, sweep)
        sources = [MergeSource(shard.path, shard.run.run_id, streams) for shard, streams in chosen if streams]
        await anyio.to_thread.run_sync(_write, out, run, sources, shards[0].record.streams, _meta(shards, sweep))
        episodes = sum(shard.streams[s] for shard, streams in chosen for s in streams)
        say(_summary(out, sweep, episodes))
    return MergeOutcome(out, sweep, episodes)


def _check_out(out: Path) -> None:
    if out.exists() or out.is_symlink():
        raise ShiftbenchInputError(f"journal merge {out}: exists; merge writes a new journal, so name a path that "
                                   "does not exist yet")
    problem = location_problem(out.absolute().parent)
    if problem is not None:
        raise ShiftbenchInputError(f"journal merge {out}: {problem}; name OUT in a writable folder")


def _check_one_sweep(shards: list[ShardInput]) -> None:
    first = shards[0]
    for shard in shards[1:]:
        for what, mine, theirs in (("config", shard.record.config_hash, first.record.config_hash),
                                   ("dataset", shard.record.dataset_fingerprint, first.record.dataset_fingerprint)):
            if mine != theirs:
                raise ShiftbenchInputError(f"journal merge: {shard.name} ran {what} {mine[:12]}, but {first.name} "
                                           f"ran {what} {theirs[:12]}; merge the shards of one sweep")
        if (shard.record.sweep_id, shard.record.count) != (first.record.sweep_id, first.record.count):
            raise ShiftbenchInputError(f"journal merge: {shard.name} is part of sweep {shard.record.sweep_id} (of "
                                       f"{shard.record.count} shards), but {first.name} of sweep "
                                       f"{first.record.sweep_id} (of {first.record.count}); merge one sweep's shards")
    seen: dict[int, ShardInput] = {}
    for shard in shards:
        other = seen.setdefault(shard.record.index, shard)
        if other is not shard:
            raise ShiftbenchInputError(f"journal merge: shard {shard.record.index}/{shard.record.count} of sweep "
                                       f"{shard.record.sweep_id} twice ({other.path} and {shard.path}); name each "
                                       "shard's journal once")


def _check_not_written(shards: list[ShardInput]) -> None:
    now = time.time()
    for shard in shards:
        writer = shard.writer(now)
        if writer is not None:
            raise ShiftbenchInputError(f"journal merge: {shard.name} is still being written (status "
                                       f"{shard.run.status}) by {writer}; wait until it ends, or if its host is "
                                       "down, until its lease lapses (then --allow-partial merges what it did, or "
                                       "its command run again finishes it)")


def _choose_sources(shards: list[ShardInput]) -> list[tuple[ShardInput, list[str]]]:
    """Each stream from one journal: the one with most finished episodes of it (first named on a tie),
    once every unit two journals both hold is the same episode in both."""
    holders: dict[str, list[ShardInput]] = {}
    for shard in shards:
        for stream in shard.streams:
            if stream not in shard.record.streams:
                raise ShiftbenchInputError(f"journal merge: {shard.name} holds stream {stream}, which sweep "
                                           f"{shard.record.sweep_id} does not plan; it is not a shard of this sweep")
            holders.setdefault(stream, []).append(shard)
    taken: dict[int, list[str]] = {id(shard): [] for shard in shards}
    for stream in shards[0].record.streams:
        found = holders.get(stream, [])
        if len(found) > 1:
            _check_same_results(stream, found)
        if found:
            best = max(found, key=lambda shard: (shard.streams[stream], -found.index(shard)))
            taken[id(best)].append(stream)
    return [(shard, taken[id(shard)]) for shard in shards]


def _check_same_results(stream: str, holders: list[ShardInput]) -> None:
    first = holders[0]
    mine = unit_results(first.path, first.run.run_id, [stream])
    for other in holders[1:]:
        for unit, theirs in unit_results(other.path, other.run.run_id, [stream]).items():
            ours = mine.get(unit)
            if ours is not None and ours.digest != theirs.digest:
                raise ShiftbenchInputError(f"journal merge: unit {unit} is journaled twice with different results "
                                           f"({', '.join(ours.differs_in(theirs))} differ; reward {ours.reward:g} in "
                                           f"{first.name}, {theirs.reward:g} in {other.name}); merge only one of them")


def _sweep_record(shards: list[ShardInput], chosen: list[tuple[ShardInput, list[str]]]) -> SweepRecord:
    record = shards[0].record
    covered = {stream for _, streams in chosen for stream in streams}
    # By stream, not by index: a shard named but short of streams (another split's) is missing them too.
    missing = [MissingShard(index, [s for s, owner in zip(record.streams, record.assignment, strict=True)
                                    if owner == index and s not in covered])
               for index in range(record.count)]
    merged = [MergedShard(s.record.index, s.run.run_id, str(s.path), s.run.status, s.run.stop_reason,
                          s.record.cap_usd, s.spent_usd, s.units_done, s.units_planned)
              for s in sorted(shards, key=lambda s: s.record.index)]
    return SweepRecord(record.sweep_id, record.count, sweep_budget(shards), merged,
                       [m for m in missing if m.streams],
                       [s.index for s in merged if s.status != "completed" or s.units_done < s.units_planned])


def _check_complete(sweep: SweepRecord, shards: list[ShardInput], allow_partial: bool) -> None:
    if allow_partial:
        return
    if sweep.missing:
        names = ", ".join(f"{m.index}/{sweep.count}" for m in sweep.missing)
        raise ShiftbenchInputError(f"journal merge: sweep {sweep.sweep_id} is missing shard {names} (no journal named "
                                   "holds it); name every shard's journal, or pass --allow-partial to merge what "
                                   "exists")
    for shard in sorted(shards, key=lambda s: s.record.index):
        if shard.record.index in sweep.incomplete:
            raise ShiftbenchInputError(f"journal merge: {shard.name} has not finished (status {shard.run.status}, "
                                       f"{shard.units_done}/{shard.units_planned} units done); run its command "
                                       "again to finish it, or pass --allow-partial")


def _merged_run(shards: list[ShardInput], sweep: SweepRecord) -> RunRow:
    first = shards[0].run
    config = orjson.loads(first.config)
    config["budget"] = sweep.budget_usd
    versions = sorted({shard.record.code_version for shard in shards})
    status, reason = "completed", ""
    if sweep.partial:
        status = "partial"
        missing = _shard_names([m.index for m in sweep.missing], sweep.count)
        unfinished = _shard_names(sweep.incomplete, sweep.count)
        reason = (f"merged {len(sweep.shards)} of {sweep.count} shards" + (f"; missing {missing}" if missing else "")
                  + (f"; unfinished {unfinished}" if unfinished else ""))
    return RunRow(sweep.sweep_id, min(s.run.created_at for s in shards), max(s.run.updated_at for s in shards),
                  status, reason, orjson.dumps(config).decode(), first.config_hash, first.dataset_path,
                  first.dataset_fingerprint, first.dataset_files, ", ".join(versions), sweep.budget_usd, 0)


def _shard_names(indices: Sequence[int], count: int) -> str:
    return ", ".join(f"{index}/{count}" for index in indices)


def _meta(shards: list[ShardInput], sweep: SweepRecord) -> dict[str, str]:
    """The shards' run meta under the sweep's id; machines that differ are kept per shard."""
    meta: dict[str, str] = {}
    machines: dict[str, object] = {}
    for shard in sorted(shards, key=lambda s: s.record.index):
        prefix = f"run:{shard.run.run_id}:"
        for key, value in shard.meta:
            suffix = key.removeprefix(prefix)
            if suffix == "machine":
                machines[str(shard.record.index)] = orjson.loads(value)
            else:
                meta[f"run:{sweep.sweep_id}:{suffix}"] = value
    if machines:
        distinct = {orjson.dumps(m, option=orjson.OPT_SORT_KEYS) for m in machines.values()}
        one = next(iter(machines.values())) if len(distinct) == 1 else {"per_shard": machines}
        meta[f"run:{sweep.sweep_id}:machine"] = orjson.dumps(one).decode()
    meta[sweep_meta_key(sweep.sweep_id)] = sweep.to_json()
    return meta


def _write(out: Path, run: RunRow, sources: list[MergeSource], order: list[str], meta: dict[str, str]) -> None:
    """Written beside OUT and linked into place when whole (`runner.common.files.creating`): a full disk or a
    failure midway leaves no OUT and no temporary file."""
    with creating(out, "journal merge") as temporary:
        write_merged(temporary, run, sources, order, meta)


def _summary(out: Path, sweep: SweepRecord, episodes: int) -> str:
    cap = "" if sweep.budget_usd is None else f" of the sweep's ${sweep.budget_usd:,.2f} cap"
    lines = [f"Merged {len(sweep.shards)} of {sweep.count} shards of sweep {sweep.sweep_id} into {out}: run "
             f"{sweep.sweep_id}, {episodes:,} episodes, ${sweep.spent_usd:,.4f} spent{cap}."]
    lines += [f"  missing shard {m.index}/{sweep.count}: {len(m.streams)} streams not merged" for m in sweep.missing]
    lines += [f"  shard {i}/{sweep.count} had not finished: its pending units stay pending" for i in sweep.incomplete]
    return "\n".join(lines)

"""`shiftbench run --shard I/N`: run one shard of a sweep, starting it or continuing it, never twice.

Every shard plans the whole sweep from its config and dataset, splits it (`runner.shards.split`) and
prints the split with every shard's cap before any call. Its run id is the sweep's id and its index,
so the same command run again (a requeued array task, a restarted pod) finds the run in its journal:
a finished shard says so and runs nothing, an unfinished one resumes in place (finished units skipped,
method state restored) exactly as `shiftbench resume` would, and a run of the same id with another
config or dataset (a reused `--sweep` name) is refused. The dataset is built or read first, before
any probe: the split needs it (shards started together build the built-in suite once, under a lock).
"""

from __future__ import annotations

import fcntl
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from runner.common.version import code_version
from runner.config.fit import check_oracle_readable, scenarios_present
from runner.config.plan import RunPart, Stream
from runner.config.settings import SweepConfig, config_hash
from runner.journal import RunRow, read_only
from runner.journal.housekeeping import run_writer
from runner.journal.sweep_record import SHARD_PREFIX, ShardRecord, shard_meta_key, shard_run_id, sweep_id_of
from runner.models.registry import build_models, close_models, model_prices
from runner.schedule.paths import check_journal_target
from runner.schedule.sweep import RunOutcome, plan_sweep, resolve_dataset, resume_sweep, start_sweep, suite_root
from runner.shards.money import render_split, shard_caps
from runner.shards.spec import ShardSpec
from runner.shards.split import Split, split_cells, streams_work
from simulators.dataset import Dataset
from simulators.errors import ShiftbenchInputError

__all__ = ["ShardPlan", "plan_shard", "start_shard"]


@dataclass(frozen=True)
class ShardPlan:
    record: ShardRecord
    split: Split
    caps: list[float | None]

    @property
    def part(self) -> RunPart:
        meta = {shard_meta_key(self.record.run_id): self.record.to_json()}
        return RunPart(self.record.run_id, frozenset(self.record.own_streams()), meta)


async def plan_shard(config: SweepConfig, dataset: Dataset, streams: list[Stream], spec: ShardSpec,
                     sweep_name: str = "") -> ShardPlan:
    """The split of the sweep and this shard's part of it (prices come from the sweep's models)."""
    if spec.count > len(streams):
        raise ShiftbenchInputError(f"{spec.source}: the sweep has {len(streams)} cells (model x method x scenario x "
                                   f"replica) and cannot be split into {spec.count} shards; use at most "
                                   f"{len(streams)}")
    models = build_models(config)
    try:
        prices = model_prices(config, models)
    finally:
        await close_models(models)

    methods = config.resolved_methods()

    def learns_with_calls(method: str) -> bool:
        found = methods[method].spec
        return found.learns and found.uses_model

    split = split_cells(streams_work(streams, learns_with_calls, prices), spec.count)
    caps = shard_caps(config.budget, split)
    sweep_id = sweep_id_of(config_hash(config), dataset.fingerprint, spec.count, sweep_name)
    record = ShardRecord(sweep_id=sweep_id, index=spec.index, count=spec.count,
                         run_id=shard_run_id(sweep_id, spec.index, spec.count), config_hash=config_hash(config),
                         dataset_fingerprint=dataset.fingerprint, code_version=code_version(),
                         streams=list(split.assignment), assignment=list(split.assignment.values()),
                         turns=list(split.turns), cost_usd=list(split.cost_usd), sweep_budget_usd=config.budget,
                         cap_usd=caps[spec.index], host=socket.gethostname())
    return ShardPlan(record, split, caps)


async def start_shard(config: SweepConfig, spec: ShardSpec, journal_path: Path, display: str = "auto",
                      say: Callable[[str], None] = print, sweep_name: str = "") -> RunOutcome:
    check_journal_target(journal_path)
    config = replace(scenarios_present(config), shards=spec.count)
    with _one_builder(config):
        dataset = resolve_dataset(config, say)
    check_oracle_readable(config, dataset)
    plan = await plan_shard(config, dataset, plan_sweep(config, dataset), spec, sweep_name)
    record = plan.record
    say(render_split(plan.split, plan.caps, spec.index, record.sweep_id, config.budget))
    existing = await _existing_run(journal_path, record)
    if existing is None:
        return await start_sweep(replace(config, budget=record.cap_usd), journal_path, display, say, plan.part)
    _check_same_sweep(existing, record, journal_path)
    if writer := await _writer(journal_path, existing):
        # refused before it says "continues": a copy on another node (a task requeued while the first still
        # runs, a command run by hand) must not look, even for a line, as if it had taken the shard over
        raise ShiftbenchInputError(f"{journal_path}: shard {spec} of sweep {record.sweep_id} is still running in "
                                   f"{writer}; nothing was written. Wait for it to end or stop it there; if that "
                                   "host is down, run this again once its lease has lapsed")
    if existing.status == "completed":
        say(f"Shard {spec} of sweep {record.sweep_id} is already complete (run {record.run_id} in {journal_path}); "
            "nothing to run.")
        return RunOutcome(record.run_id, "completed", "", journal_path)
    say(f"Shard {spec} of sweep {record.sweep_id} continues run {record.run_id}.")
    new_cap = record.cap_usd if record.cap_usd != existing.budget_usd else None
    return await resume_sweep(record.run_id, journal_path, display, say, budget=new_cap,
                              meta={shard_meta_key(record.run_id): record.to_json()})


@contextmanager
def _one_builder(config: SweepConfig) -> Iterator[None]:
    """Shards started together on one file system build the built-in suite once: the first holds a lock
    on a file beside it while it builds, the others wait and then read what it built."""
    if config.dataset:
        yield
        return
    lock = suite_root(config).with_name(f".{suite_root(config).name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _has_journal(path: Path) -> bool:
    """A journal SQLite has written to (an empty file is one a killed run had only just created)."""
    return path.is_file() and path.stat().st_size > 0


async def _existing_run(journal_path: Path, record: ShardRecord) -> RunRow | None:
    """This shard's run in the journal, if it has one; a journal holding another shard (of another
    sweep, or another index) is refused: its merge would meet two shards' runs in one file."""
    if not _has_journal(journal_path):
        return None
    async with read_only(journal_path) as reader:
        for _, text in await reader.meta_prefixed(SHARD_PREFIX):
            other = ShardRecord.from_json(text)
            if other.run_id != record.run_id:
                raise ShiftbenchInputError(
                    f"{journal_path}: holds shard {other.index}/{other.count} of sweep {other.sweep_id}, and this "
                    f"command is shard {record.index}/{record.count} of sweep {record.sweep_id}; nothing was "
                    "written. Give each shard its own journal ('{shard}' in --journal), or run the command that "
                    "started that shard")
        return await reader.run(record.run_id)


async def _writer(journal_path: Path, run: RunRow) -> str | None:
    async with read_only(journal_path) as reader:
        return await run_writer(reader, run, os.getpid())


def _check_same_sweep(existing: RunRow, record: ShardRecord, journal_path: Path) -> None:
    for what, before, now in (("config", existing.config_hash, record.config_hash),
                              ("dataset", existing.dataset_fingerprint, record.dataset_fingerprint)):
        if before != now:
            raise ShiftbenchInputError(f"{journal_path}: run {existing.run_id} (shard {record.index}/{record.count} "
                                       f"of sweep {record.sweep_id}) ran {what} {before[:12]}, these flags give "
                                       f"{now[:12]}; use the flags it started with, or another --sweep name")

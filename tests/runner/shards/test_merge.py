"""Shards of one learning sweep run one after another in this process, merged, read as a one-process run;
and every refusal of `merge`: one line, the output not created.

The scripted model is deterministic, so a shard's streams journal exactly what the same streams journal
in a one-process run: the merged report must equal that run's in every figure but the run's id, its
journal, its start time and the latencies (wall clock)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import socket
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from runner.cli import main
from runner.config.settings import SweepConfig
from runner.evidence.run_evidence import regrade_run
from runner.journal.lease import Lease
from runner.journal.sweep_record import SweepRecord, sweep_meta_key
from runner.report import build_report, render_json, render_text
from runner.schedule.sweep import resume_sweep, start_sweep
from runner.shards.merge import merge_shards
from runner.shards.spec import ShardSpec
from runner.shards.start import start_shard
from simulators.errors import ShiftbenchInputError
from tests.support import quiet

SCENARIOS = ("banking_l1", "pitch_l1")
WALL_CLOCK = {"latency_p50_s", "latency_p95_s"}


def sweep_config(dataset: Path, **more: Any) -> SweepConfig:
    return SweepConfig(methods=("tabular", "rag"), scenarios=SCENARIOS, dataset=str(dataset), pilot=2, **more)


async def run_shards(config: SweepConfig, folder: Path, count: int = 4, name: str = "") -> list[Path]:
    paths = []
    for index in range(count):
        path = folder / f"shard-{index}.sqlite"
        outcome = await start_shard(config, ShardSpec(index, count), path, "none", quiet, name)
        assert outcome.status == "completed"
        paths.append(path)
    return paths


def comparable(report: Any) -> dict[str, Any]:
    data = asdict(report)
    for key in ("run_id", "journal", "created_at", "sweep", "method_streams"):  # method time is wall clock too
        data.pop(key)
    for stream in data["streams"]:
        for key in WALL_CLOCK:
            stream.pop(key)
    data["provenance"]["config"].pop("shards")  # 4 for the merge: how it ran, not what it found
    return data


def rewards(journal: Path, run_id: str) -> dict[str, float]:
    with sqlite3.connect(journal) as db:
        return dict(db.execute("SELECT unit_id, reward FROM episodes WHERE run_id = ?", (run_id,)).fetchall())


def unit_order(journal: Path, run_id: str) -> list[str]:
    with sqlite3.connect(journal) as db:
        return [row[0] for row in db.execute("SELECT unit_id FROM units WHERE run_id = ? ORDER BY rowid", (run_id,))]


@contextlib.contextmanager
def edited(journal: Path) -> Iterator[sqlite3.Connection]:
    """A journal edited by hand as a test plants a state, committed and closed (so no -wal or -shm of this
    connection is left to change under the code tested)."""
    with contextlib.closing(sqlite3.connect(journal)) as db, db:
        yield db


def plant_lease(journal: Path, lease: Lease, status: str) -> None:
    """The state a writer leaves mid-run: its only run journaled with `status` and `lease` as its lease."""
    with edited(journal) as db:
        (run_id,), = db.execute("SELECT run_id FROM runs").fetchall()
        db.execute("UPDATE runs SET status = ?, pid = ?", (status, lease.pid))
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"lease:{run_id}", lease.to_json()))


def state_of(out: Path) -> tuple[bool, bool, bytes]:
    return out.exists(), out.is_dir(), out.read_bytes() if out.is_file() else b""


REFUSALS: list[str] = []


async def refused(out: Path, paths: list[Path], match: str, allow_partial: bool = False) -> str:
    """`shiftbench journal merge` refuses with one line on stderr and exit code 2; OUT is as it was (absent,
    or the file or folder that was there) and nothing is left beside it."""
    before = state_of(out)
    args = ["journal", "merge", str(out), *map(str, paths), *(["--allow-partial"] if allow_partial else [])]
    with contextlib.redirect_stderr(io.StringIO()) as stderr, contextlib.redirect_stdout(io.StringIO()):
        code = await anyio.to_thread.run_sync(main, args)
    message = stderr.getvalue()
    assert code == 2 and re.search(match, message), message
    assert message.count("\n") == 1 and message.startswith("shiftbench: error: journal merge")
    assert state_of(out) == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    REFUSALS.append(message.strip())
    return message


async def test_merged_shards_read_as_a_one_process_run(built_suite: Path, tmp_path: Path) -> None:
    config = sweep_config(built_suite)
    paths = await run_shards(config, tmp_path)
    merged = tmp_path / "merged.sqlite"
    outcome = await merge_shards(merged, paths, say=quiet)
    sweep = outcome.sweep.sweep_id
    one = await start_sweep(config, tmp_path / "one.sqlite", "none", quiet)

    assert rewards(merged, sweep) == rewards(tmp_path / "one.sqlite", one.run_id)
    assert unit_order(merged, sweep) == unit_order(tmp_path / "one.sqlite", one.run_id)
    merged_report = await build_report(merged, sweep)
    one_report = await build_report(tmp_path / "one.sqlite", one.run_id)
    assert merged_report.status == "completed" and merged_report.provenance.config["shards"] == 4
    assert comparable(merged_report) == comparable(one_report)
    sealed = orjson.loads(render_json(merged_report))
    assert sealed["scores_seal"] == orjson.loads(render_json(one_report))["scores_seal"]
    assert sealed["sha256"] != orjson.loads(render_json(one_report))["sha256"]  # run id, journal, times differ
    assert re.search(r"merged 4 of 4 shards, \$\d+\.\d{4} spent in all, with no cap\n", render_text(merged_report))
    regraded = await regrade_run(merged, sweep)
    assert regraded.checked > 0 and regraded.mismatches == []
    with sqlite3.connect(merged) as db:
        record = SweepRecord.from_json(db.execute("SELECT value FROM meta WHERE key = ?",
                                                  (sweep_meta_key(sweep),)).fetchone()[0])
        assert db.execute("SELECT count(*) FROM meta WHERE key LIKE 'shard:%'").fetchone()[0] == 0
    assert [s.index for s in record.shards] == [0, 1, 2, 3] and not record.partial
    # The same command again (a requeued array task) runs nothing and changes nothing.
    before = os.stat(paths[2]).st_mtime_ns, rewards(paths[2], f"{sweep}-shard2of4")
    again = await start_shard(config, ShardSpec(2, 4), paths[2], "none", quiet)
    assert again.status == "completed" and rewards(paths[2], again.run_id) == before[1]


async def test_every_refusal_is_one_line_and_writes_nothing(built_suite: Path, tmp_path: Path) -> None:
    config = sweep_config(built_suite)
    paths = await run_shards(config, tmp_path)
    out = tmp_path / "out" / "merged.sqlite"
    out.parent.mkdir()

    # a duplicate shard: the same journal twice, or shard 1 run again into a journal of its own
    await refused(out, [*paths, paths[1]], "shard 1/4 of sweep .* twice")
    extra = tmp_path / "again-1.sqlite"
    await start_shard(config, ShardSpec(1, 4), extra, "none", quiet)
    await refused(out, [*paths, extra], "twice")
    # another config, another sweep (a name, or another count)
    other = tmp_path / "other"
    other.mkdir()
    (changed,) = await run_shards(sweep_config(built_suite, block_size=2), other, count=1)
    await refused(out, [*paths[:3], changed], "ran config")
    named = tmp_path / "named"
    named.mkdir()
    named_paths = await run_shards(config, named, name="lab-a")
    await refused(out, [*paths[:3], named_paths[3]], "part of sweep lab-a")
    # missing and unfinished shards, unless --allow-partial
    await refused(out, paths[:3], "missing shard 3/4")
    # a unit journaled twice with different results: shard 1's journal presented as shard 2 as well
    forged = tmp_path / "forged.sqlite"
    shutil.copy(paths[1], forged)
    with sqlite3.connect(forged) as db:
        key, value = db.execute("SELECT key, value FROM meta WHERE key LIKE 'shard:%'").fetchone()
        forged_record = orjson.dumps({**orjson.loads(value), "index": 2}).decode()
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (forged_record, key))
    # the same results twice are taken once, and shard 2's own streams are then missing
    await refused(out, [paths[0], paths[1], forged, paths[3]], "missing shard 2/4")
    with sqlite3.connect(forged) as db:
        db.execute("UPDATE episodes SET reward = CASE WHEN reward = 1 THEN 0 ELSE 1 END "
                   "WHERE rowid = (SELECT min(rowid) FROM episodes)")
    await refused(out, [paths[0], paths[1], forged, paths[3]], "journaled twice with different results")
    # a shard still being written: journaled as running, its lease held by a live process of this machine
    live = tmp_path / "live.sqlite"
    shutil.copy(paths[3], live)
    plant_lease(live, Lease(socket.gethostname(), os.getpid(), time.time(), 60.0), status="running")
    await refused(out, [*paths[:3], live], f"still being written .* by process {os.getpid()} on this host")
    # OUT exists (a file, a folder)
    out.write_text("a file someone keeps")
    await refused(out, paths, "exists")
    out.unlink()
    await refused(out.parent, paths, "exists")
    # a journal that holds no shard
    one = await start_sweep(config, tmp_path / "one.sqlite", "none", quiet)
    assert one.status == "completed"
    await refused(out, [*paths, tmp_path / "one.sqlite"], "no shard of a sweep")
    await refused(out, [*paths, tmp_path / "nothing.sqlite"], "no journal file here")
    print("\n" + "\n".join(REFUSALS))


async def test_another_dataset_is_refused_and_a_partial_merge_names_what_is_missing(built_suite: Path,
                                                                                   tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    for top in ("data", "environments"):
        for name in SCENARIOS:
            shutil.copytree(built_suite / top / name, dataset / top / name)
    config = sweep_config(dataset)
    first = await run_shards(config, tmp_path)
    policy = dataset / "environments" / "pitch_l1" / "policy.md"
    policy.write_text(policy.read_text() + "\n")
    changed = tmp_path / "changed.sqlite"
    await start_shard(config, ShardSpec(3, 4), changed, "none", quiet)
    out = tmp_path / "merged.sqlite"
    await refused(out, [*first[:3], changed], "ran dataset")
    policy.write_text(policy.read_text()[:-1])

    outcome = await merge_shards(out, first[:3], allow_partial=True, say=quiet)
    assert [m.index for m in outcome.sweep.missing] == [3]
    report = await build_report(out, outcome.sweep.sweep_id)
    assert report.status == "partial" and "missing 3/4" in report.stop_reason
    # A merged run is not resumed: its shards are.
    with pytest.raises(ShiftbenchInputError, match="merge of shard journals"):
        await resume_sweep(outcome.sweep.sweep_id, out, "none", quiet)


async def test_a_replicated_sweep_shards_by_replica_and_merges_to_the_one_process_run(built_suite: Path,
                                                                                       tmp_path: Path) -> None:
    config = SweepConfig(methods=("tabular",), scenarios=("pitch_l1",), dataset=str(built_suite), pilot=2,
                         replicas=3)
    paths = await run_shards(config, tmp_path, count=3)
    with sqlite3.connect(paths[2]) as db:
        (stream,), = db.execute("SELECT DISTINCT stream_id FROM units").fetchall()
    assert stream.startswith("scripted|tabular|pitch_l1") and "replica" in stream  # one replica a shard
    outcome = await merge_shards(tmp_path / "merged.sqlite", paths, say=quiet)
    one = await start_sweep(config, tmp_path / "one.sqlite", "none", quiet)
    sweep = outcome.sweep.sweep_id
    assert rewards(tmp_path / "merged.sqlite", sweep) == rewards(tmp_path / "one.sqlite", one.run_id)
    assert unit_order(tmp_path / "merged.sqlite", sweep) == unit_order(tmp_path / "one.sqlite", one.run_id)
    merged_report = await build_report(tmp_path / "merged.sqlite", sweep)
    one_report = await build_report(tmp_path / "one.sqlite", one.run_id)
    assert comparable(merged_report) == comparable(one_report)
    seals = [orjson.loads(render_json(report))["scores_seal"] for report in (merged_report, one_report)]
    assert seals[0] == seals[1]

"""Every refusal of a shard's start and of `journal merge`, each with the exact state that triggers it, the
borderline ones beside it (what must still pass): a rerun array of one task, a journal holding another
sweep's shard, a copy of the shard on another host (a live lease) and one whose host died (a lapsed
lease), a shard stopping but not stopped, shards run with other budgets, caps or settings, a unit
journaled twice that agrees on its reward but not on its steps, grade or cost. Each refusal is one line,
exit 2, and leaves every journal byte-for-byte as it was."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import os
import shutil
import socket
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from runner.cli import main
from runner.journal.lease import Lease
from runner.schedule.sweep import resume_sweep
from runner.shards.merge import merge_shards
from runner.shards.spec import ShardSpec
from runner.shards.start import start_shard
from simulators.errors import ShiftbenchInputError
from tests.media import read_only_view
from tests.runner.shards.test_merge import edited, plant_lease, run_shards, sweep_config
from tests.support import quiet

OTHER_HOST = "node-b.cluster.example"
"""A host that is not this one: its processes cannot be seen from here, only its lease."""


def digests(folder: Path) -> dict[str, str]:
    """Every file under `folder` (journals, their -wal/-shm, logs) -> its sha256: what a refusal must not touch."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def cli_refused(args: Sequence[str], says: str) -> str:
    """`shiftbench ARGS` exits 2 with one line on stderr holding `says`."""
    with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
        code = main(list(args))
    message = err.getvalue()
    assert code == 2 and says in message and message.count("\n") == 1, message
    return message


def sweep_file(folder: Path, suite: Path, shards: int = 0) -> Path:
    path = folder / "sweep.toml"
    path.write_text(f'dataset = "{suite}"\nmethods = ["tabular", "rag"]\nscenarios = ["banking_l1", "pitch_l1"]\n'
                    "pilot = 2\n" + (f"shards = {shards}\n" if shards else ""))
    return path


# ------------------------------------------------------------------------------------------ a shard's start


async def test_an_array_of_one_task_rerunning_a_finished_sweep_is_refused_and_writes_nothing(
        built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sbatch --array=1 slurm-shards.sbatch` after a 2-shard sweep finished: SLURM gives task 1 of an array
    of 1 (min 1). With `shards = 2` in the sweep file the count clashes; without it, auto has no count."""
    journals = tmp_path / "journals"
    journals.mkdir()
    for index in range(2):
        await start_shard(sweep_config(built_suite), ShardSpec(index, 2), journals / f"shard-{index}.sqlite", "none",
                          quiet)
    before = digests(tmp_path)
    rerun = {"SLURM_ARRAY_JOB_ID": "77", "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1",
             "SLURM_ARRAY_TASK_MAX": "1", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_STEP": "1"}
    for name, value in rerun.items():
        monkeypatch.setenv(name, value)
    for shards, says in ((2, "scontrol requeue JOBID_1"), (0, "set shards = N in the sweep file")):
        config = sweep_file(tmp_path, built_suite, shards)
        before = digests(tmp_path)
        command = ["run", "--config", str(config), "--shard", "auto", "--journal",
                   str(journals / "shard-{shard}.sqlite"), "--display", "none"]
        message = await anyio.to_thread.run_sync(cli_refused, command, says)
        assert digests(tmp_path) == before, message
        assert sorted(p.name for p in journals.iterdir()) == ["shard-0.sqlite", "shard-1.sqlite"]


async def test_a_journal_holding_another_sweeps_shard_refuses_a_new_sweeps_run(built_suite: Path,
                                                                              tmp_path: Path) -> None:
    journal = tmp_path / "shard-0.sqlite"
    await start_shard(sweep_config(built_suite), ShardSpec(0, 2), journal, "none", quiet)
    before = digests(tmp_path)
    for config, spec in ((sweep_config(built_suite), ShardSpec(0, 1)),  # another count: another sweep
                         (sweep_config(built_suite, block_size=2), ShardSpec(0, 2)),  # another config
                         (sweep_config(built_suite), ShardSpec(1, 2))):  # the same sweep, another shard
        with pytest.raises(ShiftbenchInputError, match=r"holds shard 0/2 of sweep sw-\w+, and this command is "
                                                       rf"shard {spec.index}/{spec.count}"):
            await start_shard(config, spec, journal, "none", quiet)
        assert digests(tmp_path) == before
    # the borderline: the same command again finds its own run there and runs nothing
    again = await start_shard(sweep_config(built_suite), ShardSpec(0, 2), journal, "none", quiet)
    assert again.status == "completed" and digests(tmp_path) == before


async def test_a_copy_on_another_host_is_refused_by_its_live_lease_and_runs_once_it_lapses(
        built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "shard-1.sqlite"
    config = sweep_config(built_suite)
    await start_shard(config, ShardSpec(1, 2), journal, "none", quiet)
    # as a copy on node-b leaves it mid-run: journaled as running, its lease renewed a second ago
    with edited(journal) as db:
        db.execute("UPDATE units SET status = 'pending' WHERE rowid IN (SELECT max(rowid) FROM units)")
        db.execute("DELETE FROM episodes WHERE rowid IN (SELECT max(rowid) FROM episodes)")
    plant_lease(journal, Lease(OTHER_HOST, 4242, time.time() - 1, 60.0), status="running")
    before = digests(tmp_path)
    with pytest.raises(ShiftbenchInputError, match=f"still running in process 4242 on host {OTHER_HOST}"):
        await start_shard(config, ShardSpec(1, 2), journal, "none", quiet)
    assert digests(tmp_path) == before
    # node-b died: its lease lapsed 1 s ago, and the same command here continues the shard to its end
    plant_lease(journal, Lease(OTHER_HOST, 4242, time.time() - 61, 60.0), status="running")
    done = await start_shard(config, ShardSpec(1, 2), journal, "none", quiet)
    assert done.status == "completed"
    with edited(journal) as db:
        (lease_text,), = db.execute("SELECT value FROM meta WHERE key LIKE 'lease:%'").fetchall()
    lease = Lease.from_json(lease_text)
    assert lease is not None and lease.host == socket.gethostname() and lease.pid == os.getpid() and lease.released


# -------------------------------------------------------------------------------------------------- merge


async def merge_refused(out: Path, paths: Sequence[Path], says: str, *flags: str) -> str:
    sources = out.parent
    before = digests(sources)
    message = await anyio.to_thread.run_sync(cli_refused, ["journal", "merge", str(out), *map(str, paths), *flags],
                                             says)
    assert message.startswith("shiftbench: error: journal merge")
    assert digests(sources) == before and out.name not in before
    return message


async def test_merge_judges_a_writer_by_its_lease_on_any_host(built_suite: Path, tmp_path: Path) -> None:
    paths = await run_shards(sweep_config(built_suite), tmp_path, count=2)
    out = tmp_path / "merged.sqlite"
    held = tmp_path / "held.sqlite"
    shutil.copy(paths[1], held)
    now = time.time()
    # on another host, renewed 5 s ago: still being written, the message names host and PID
    plant_lease(held, Lease(OTHER_HOST, 4242, now - 5, 60.0), status="running")
    await merge_refused(out, [paths[0], held], f"by process 4242 on host {OTHER_HOST}")
    # stopping but not yet stopped (in-flight work finishing), its lease live on this host
    plant_lease(held, Lease(socket.gethostname(), os.getpid(), now, 60.0), status="stopping: signal")
    await merge_refused(out, [paths[0], held], "still being written (status stopping: signal)")
    # the borderline ones: a lapsed lease (node-b died), a holder of this host that is gone, a lease given
    # up: nobody writes it, so it is only unfinished (journaled as running), merged with --allow-partial
    gone = _dead_pid()
    for lease in (Lease(OTHER_HOST, 4242, now - 61, 60.0), Lease(socket.gethostname(), gone, now, 60.0),
                  Lease(OTHER_HOST, 4242, now, 60.0, released=True)):
        plant_lease(held, lease, status="running")
        await merge_refused(out, [paths[0], held], "has not finished (status running")
    outcome = await merge_shards(out, [paths[0], held], allow_partial=True, say=quiet)
    assert outcome.sweep.incomplete == [1] and outcome.episodes > 0


def _dead_pid() -> int:
    """A PID of this machine whose process has ended (a shard SIGKILLed here)."""
    import subprocess

    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


async def test_merge_refuses_shards_with_other_budgets_caps_or_settings(built_suite: Path, tmp_path: Path) -> None:
    config = sweep_config(built_suite, budget=50.0)
    paths = await run_shards(config, tmp_path, count=2)
    out = tmp_path / "merged.sqlite"
    cheaper = tmp_path / "cheaper"
    cheaper.mkdir()
    other_budget = cheaper / "shard-1.sqlite"
    await start_shard(dataclasses.replace(config, budget=30.0), ShardSpec(1, 2), other_budget, "none", quiet)
    await merge_refused(out, [paths[0], other_budget], "was started with the budget $30.00 for the sweep, but "
                                                       "shard 0/2")
    slower = tmp_path / "slower-1.sqlite"
    await start_shard(dataclasses.replace(config, concurrency=8), ShardSpec(1, 2), slower, "none", quiet)
    await merge_refused(out, [paths[0], slower], "ran with concurrency = 8, but shard 0/2")
    # a shard's cap one micro-dollar off its share (a `resume --budget` of one shard, or an edited record)
    recapped = tmp_path / "recapped-1.sqlite"
    shutil.copy(paths[1], recapped)
    with edited(recapped) as db:
        (cap,), = db.execute("SELECT budget_usd FROM runs").fetchall()
        db.execute("UPDATE runs SET budget_usd = ?", (round(cap + 0.000001, 6),))
    await merge_refused(out, [paths[0], recapped], f"ran under a cap of ${cap + 0.000001:,.6f}, but its share")
    # told to, it merges them, and the merged cap is what the caps the shards ran under add up to
    mixed = await merge_shards(out, [paths[0], other_budget], say=quiet, allow_mixed=True)
    caps = [s.cap_usd for s in mixed.sweep.shards]
    assert mixed.sweep.budget_usd == pytest.approx(sum(c for c in caps if c is not None))
    assert mixed.sweep.budget_usd is not None and mixed.sweep.budget_usd < 50.0
    # the borderline: the same budget and settings merge with the sweep's own cap
    same = await merge_shards(tmp_path / "same.sqlite", paths, say=quiet)
    assert same.sweep.budget_usd == 50.0


async def test_a_resume_with_another_budget_of_one_shard_is_refused_by_the_merge(built_suite: Path,
                                                                                 tmp_path: Path) -> None:
    config = sweep_config(built_suite, budget=50.0)
    paths = await run_shards(config, tmp_path, count=2)
    with edited(paths[1]) as db:  # as a killed shard leaves it: one unit pending
        (run_id,), = db.execute("SELECT run_id FROM runs").fetchall()
        db.execute("UPDATE units SET status = 'pending' WHERE rowid IN (SELECT max(rowid) FROM units)")
        db.execute("DELETE FROM episodes WHERE rowid IN (SELECT max(rowid) FROM episodes)")
        db.execute("UPDATE runs SET status = 'interrupted'")
    await resume_sweep(run_id, paths[1], "none", quiet, budget=40.0)
    await merge_refused(tmp_path / "merged.sqlite", paths, "ran under a cap of $40.000000, but its share of the "
                                                           "sweep's the budget $50.00 is $")


async def test_a_unit_journaled_twice_must_agree_on_steps_grade_and_cost_not_only_reward(built_suite: Path,
                                                                                          tmp_path: Path) -> None:
    paths = await run_shards(sweep_config(built_suite), tmp_path, count=2)
    out = tmp_path / "merged.sqlite"
    copy = tmp_path / "copy-0.sqlite"
    # the same streams journaled twice, as two runs of shard 0 would leave them: taken once when equal
    shutil.copy(paths[0], copy)
    with edited(copy) as db:
        key, value = db.execute("SELECT key, value FROM meta WHERE key LIKE 'shard:%'").fetchone()
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (value.replace('"index":0', '"index":1'), key))
    await merge_refused(out, [paths[0], copy], "missing shard 1/2")
    for column, value, differ in (("record", "CAST(record || x'20' AS BLOB)", "steps"),
                                  ("grade_details", "CAST(grade_details || x'20' AS BLOB)", "grade"),
                                  ("cost_usd", "cost_usd + 0.01", "cost"), ("turns", "turns + 1", "cost")):
        changed = tmp_path / f"changed-{column}.sqlite"
        shutil.copy(copy, changed)
        with edited(changed) as db:
            db.execute(f"UPDATE episodes SET {column} = {value} WHERE rowid = (SELECT min(rowid) FROM episodes)")
        message = await merge_refused(out, [paths[0], changed], "journaled twice with different results")
        assert f"({differ} differ; reward" in message, message


async def test_a_merge_leaves_its_sources_byte_for_byte_and_reads_them_through_a_read_only_mount(
        built_suite: Path, tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    shards.mkdir()
    paths = await run_shards(sweep_config(built_suite), shards, count=2)
    before = digests(shards)
    with read_only_view(shards) as seen:  # EROFS for any write, root's included: a merge that writes fails
        outcome = await merge_shards(tmp_path / "merged.sqlite", [seen / p.name for p in paths], say=quiet)
    assert not outcome.sweep.partial and digests(shards) == before

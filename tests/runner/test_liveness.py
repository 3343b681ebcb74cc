"""A run journaled as running but whose process is gone shows as resumable; a live one is not resumed twice."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.journal import Batch, open_journal
from runner.journal.housekeeping import remove_run, vacuum_journal
from runner.journal.lease import Lease, lease_meta_key
from runner.schedule.sweep import resume_sweep
from runner.views.runs import list_runs
from simulators.errors import ShiftbenchInputError


async def journal_run(path: Path, pid: int) -> None:
    async with open_journal(path) as journal:
        await journal.commit(Batch().add(
            "INSERT INTO runs (run_id, created_at, updated_at, status, config, config_hash, dataset_path, "
            "dataset_fingerprint, code_version, pid) VALUES ('r1', 0, 0, 'running', '{}', 'h', '', '', 'v', ?)",
            (pid,)))


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


async def test_runs_shows_a_killed_run_as_stopped(tmp_path: Path) -> None:
    await journal_run(tmp_path / "j.sqlite", dead_pid())
    [run] = await list_runs(tmp_path / "j.sqlite")
    assert run.status.startswith("stopped (process gone")


@pytest.fixture
def live_pid() -> Iterator[int]:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield sleeper.pid
    sleeper.kill()
    sleeper.wait()


async def test_resume_refuses_a_run_whose_process_is_alive(tmp_path: Path, live_pid: int) -> None:
    await journal_run(tmp_path / "j.sqlite", live_pid)
    with pytest.raises(ShiftbenchInputError, match=f"still running in process {live_pid}"):
        await resume_sweep("r1", tmp_path / "j.sqlite", "none", lambda text: None)


# --- a run's lease (shards, issue 31) decides, not the local PID alone -----------------------------


async def lease_run(path: Path, pid: int, lease: Lease) -> None:
    await journal_run(path, pid)
    async with open_journal(path) as journal:
        await journal.commit(Batch().set_meta(lease_meta_key("r1"), lease.to_json()))


async def test_a_run_whose_lease_is_live_on_another_host_is_running_and_kept(tmp_path: Path) -> None:
    # Its PID means nothing here (no such process on this host): the lease, renewed 2 s ago, says it runs.
    path = tmp_path / "j.sqlite"
    await lease_run(path, dead_pid(), Lease("node-7", 4242, time.time() - 2, 60.0))
    [run] = await list_runs(path)
    assert run.status == "running"
    with pytest.raises(ShiftbenchInputError, match="being written by process 4242 on host node-7"):
        await remove_run(path, "r1")
    with pytest.raises(ShiftbenchInputError, match="run r1 is being written by process 4242 on host node-7"):
        await vacuum_journal(path)


@pytest.mark.parametrize("lease", [
    Lease("node-7", 4242, time.time() - 61, 60.0),             # lapsed: its host stopped renewing it
    Lease("node-7", 4242, time.time() - 2, 60.0, released=True),  # given up when the run ended
], ids=["lapsed", "released"])
async def test_a_run_whose_lease_is_stale_is_stopped_even_with_its_pid_alive(tmp_path: Path, live_pid: int,
                                                                             lease: Lease) -> None:
    # The PID journaled is alive on this host (another process now), but the run's lease is not live.
    path = tmp_path / "j.sqlite"
    await lease_run(path, live_pid, lease)
    [run] = await list_runs(path)
    assert run.status.startswith("stopped (process gone")
    assert (await remove_run(path, "r1")).run_id == "r1"


async def test_a_lease_of_this_host_whose_process_is_gone_is_stopped(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    gone = dead_pid()
    await lease_run(path, gone, Lease(socket.gethostname(), gone, time.time() - 2, 60.0))
    [run] = await list_runs(path)
    assert run.status.startswith("stopped (process gone")
    await vacuum_journal(path)

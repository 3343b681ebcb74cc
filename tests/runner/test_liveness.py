"""A run journaled as running but whose process is gone shows as resumable; a live one is not resumed twice."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.journal import Batch, open_journal
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

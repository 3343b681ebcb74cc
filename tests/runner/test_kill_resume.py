"""SIGKILL a real sweep at random moments, resume each time: the results match an uninterrupted run."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

KILLS = 10


def shiftbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "runner.cli", *args]


def sweep_args(suite: Path, journal: Path) -> list[str]:
    return ["--dataset", str(suite), "--scenarios", "banking_l1,retail_l1,pitch_l1",
            "--methods", "blind,oracle,icl_full", "--models", "scripted", "--block-size", "3",
            "--journal", str(journal), "--display", "none"]


def rewards(journal: Path) -> dict[str, float]:
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT unit_id, reward FROM episodes").fetchall()
    return {unit.split("|", 1)[1]: reward for unit, reward in rows}


def only_run(journal: Path) -> tuple[str, str]:
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT run_id, status FROM runs").fetchall()
    assert len(rows) == 1
    return rows[0][0], rows[0][1]


def run_until_killed(cmd: list[str], delay: float) -> int | None:
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        return None


@pytest.mark.slow
def test_sigkill_then_resume_gives_identical_rewards(built_suite: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference.sqlite"
    started = time.monotonic()
    subprocess.run(shiftbench("run", *sweep_args(built_suite, reference)), check=True, capture_output=True)
    duration = time.monotonic() - started
    expected = rewards(reference)
    # Kill after start-up (imports, dataset load) plus a random share of the work, so kills land while
    # episodes, learning steps and checkpoints are in flight, and ten of them fit in one sweep: each
    # resume gets at most an eighth of the work (a quarter let the sweep finish after 9 kills on a
    # loaded machine, where a resume's share of progress varies with the load).
    started = time.monotonic()
    subprocess.run(shiftbench("data", "check", str(built_suite)), check=True, capture_output=True)
    startup = time.monotonic() - started

    def moment() -> float:
        return startup + rng.uniform(0.0, max(0.2, (duration - startup) / 8))

    journal = tmp_path / "killed.sqlite"
    rng = random.Random(7)
    kills = 0
    exit_code = run_until_killed(shiftbench("run", *sweep_args(built_suite, journal)), moment())
    kills += exit_code is None
    while True:
        if journal.exists() and only_run(journal)[1] == "completed":
            break
        if not journal.exists():  # killed before the run was journaled: start again
            exit_code = run_until_killed(shiftbench("run", *sweep_args(built_suite, journal)), duration)
            continue
        run_id = only_run(journal)[0]
        cmd = shiftbench("resume", run_id, "--journal", str(journal), "--display", "none")
        delay = moment() if kills < KILLS else 10 * duration + 30
        exit_code = run_until_killed(cmd, delay)
        kills += exit_code is None
    assert kills >= KILLS
    assert rewards(journal) == expected
    with sqlite3.connect(journal) as db:
        pending = db.execute("SELECT count(*) FROM units WHERE status != 'done'").fetchone()[0]
        episodes = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        units = db.execute("SELECT count(*) FROM units").fetchone()[0]
    assert pending == 0 and episodes == units

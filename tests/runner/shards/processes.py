"""Shard processes as a scheduler starts them: real subprocesses, frozen and killed at a moment the
journal itself reports (episodes committed), never at a wall-clock guess."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson

from tests.runner.test_kill_resume import committed, shiftbench

POLL_S = 0.01
PROCESS_TIMEOUT_S = 240


def start(cmd: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Started with its output to `log` (the child keeps the file open; this process does not)."""
    with log.open("wb") as out:
        return subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})


def freeze_after(process: subprocess.Popen[bytes], journal: Path, episodes: int) -> bool:
    """SIGSTOP the process once its journal holds `episodes` episodes; False if it ended first."""
    while process.poll() is None:
        if committed(journal) >= episodes:
            process.send_signal(signal.SIGSTOP)
            return process.poll() is None
        time.sleep(POLL_S)
    return False


def kill(process: subprocess.Popen[bytes]) -> None:
    process.kill()  # SIGKILL, even while stopped
    process.wait(timeout=PROCESS_TIMEOUT_S)


def finish(processes: Sequence[subprocess.Popen[bytes]]) -> list[int]:
    return [process.wait(timeout=PROCESS_TIMEOUT_S) for process in processes]


def cli(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shiftbench(*args), capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S,
                          env={**os.environ, **(env or {})})


def task_rewards(journal: Path, run_id: str) -> dict[tuple[str, int], float]:
    """(unit id, repetition) -> reward of every test episode of a run (unit ids carry no run id)."""
    with sqlite3.connect(journal) as db:
        return {(unit, rep): reward for unit, rep, reward in db.execute(
            "SELECT u.unit_id, u.repetition, e.reward FROM episodes e JOIN units u USING (run_id, unit_id) "
            "WHERE e.run_id = ? AND u.phase = 'test'", (run_id,))}


def only_run(journal: Path) -> str:
    with sqlite3.connect(journal) as db:
        (run_id,), = db.execute("SELECT run_id FROM runs").fetchall()
    return str(run_id)


def report_json(journal: Path, run_id: str) -> dict[str, object]:
    done = cli("report", run_id, "--json", "--journal", str(journal))
    assert done.returncode == 0, done.stderr
    parsed: dict[str, object] = orjson.loads(done.stdout)
    return parsed

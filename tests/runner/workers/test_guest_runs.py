"""A user's method in a real sweep runs in a worker process of its own: nothing of the runner is in its
frames, each stream has its own instance (class-level state cannot leak across streams), and
`--methods-in-process` (recorded in the config) brings back the runner's process, frames and all."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import orjson

from tests.runner.test_kill_resume import shiftbench

GUESTS = Path(__file__).with_name("guests.py")


def guest_file(tmp_path: Path) -> Path:
    copied = tmp_path / "guests.py"
    shutil.copyfile(GUESTS, copied)
    return copied


def run(suite: Path, journal: Path, methods: str, *more: str, scenarios: str = "retail_l1",
        pilot: int = 3) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shiftbench("run", "--dataset", str(suite), "--scenarios", scenarios, "--methods", methods,
                                     "--pilot", str(pilot), "--journal", str(journal), "--display", "none", *more),
                          capture_output=True, text=True, timeout=300)


def latest_states(journal: Path) -> dict[str, dict[str, object]]:
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT stream_id, state FROM checkpoints WHERE label = 'latest'").fetchall()
    return {stream: orjson.loads(state) for stream, state in rows}


def stored_config(journal: Path) -> dict[str, object]:
    with sqlite3.connect(journal) as db:
        (config,) = db.execute("SELECT config FROM runs").fetchone()
    loaded: dict[str, object] = orjson.loads(config)
    return loaded


def test_a_guest_in_its_worker_finds_nothing_of_the_runner_in_its_frames(built_suite: Path, tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    journal = tmp_path / "worker.sqlite"
    done = run(built_suite, journal, f"{guests}:SPY")
    assert done.returncode == 0, done.stderr
    (state,) = latest_states(journal).values()
    assert state["found"] == [] and state["seen"] > 0
    assert stored_config(journal)["methods_in_process"] is False
    # In the runner's process the same method finds the labelled task in the engine's frames.
    in_process = tmp_path / "in-process.sqlite"
    done = run(built_suite, in_process, f"{guests}:SPY", "--methods-in-process")
    assert done.returncode == 0, done.stderr
    (state_there,) = latest_states(in_process).values()
    assert state_there["found"] != [] and state_there["pid"] != state["pid"]
    assert stored_config(in_process)["methods_in_process"] is True


def test_class_level_state_stays_in_its_own_streams_worker(built_suite: Path, tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    both = tmp_path / "both.sqlite"
    assert run(built_suite, both, f"{guests}:SHARED", scenarios="retail_l1,banking_l1").returncode == 0
    for scenario in ("retail_l1", "banking_l1"):
        solo = tmp_path / f"{scenario}.sqlite"
        assert run(built_suite, solo, f"{guests}:SHARED", scenarios=scenario).returncode == 0
        (alone,) = latest_states(solo).values()
        together = [s for stream, s in latest_states(both).items() if scenario in stream]
        assert together == [alone] and alone["notes"]

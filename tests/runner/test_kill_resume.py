"""SIGKILL a real sweep mid-work, resume each time: the results match an uninterrupted run.

The deterministic test kills when the journal's own progress says so (after N committed episodes, read
from the journal the process is writing), never at a wall-clock guess, so every kill lands mid-work
on a loaded machine too. Its method is `tabular`, whose restored state changes the scores: a broken
checkpoint restore would show in the rewards. The long random-moment version stays behind `slow`.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

KILLS = 4
RANDOM_KILLS = 6
# The random-moment test's work is about 2 + RANDOM_KILLS / 3 uninterrupted sweeps (the reference, each
# kill at a random moment in the first third of a sweep, the final resume) plus a process start per kill.
# Six kills (was ten) still land at random moments; the test's own timeout covers a busy 2-core CI
# machine, where ten kills once hit the default 300 s.
RANDOM_MOMENTS_TIMEOUT_S = 900


def shiftbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "runner.cli", *args]


def sweep_args(suite: Path, journal: Path, methods: str, scenarios: str, *more: str) -> list[str]:
    return ["--dataset", str(suite), "--scenarios", scenarios, "--methods", methods, "--models", "scripted",
            "--block-size", "3", "--journal", str(journal), "--display", "none", *more]


def rewards(journal: Path) -> dict[str, float]:
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT unit_id, reward FROM episodes").fetchall()
    return {unit.split("|", 1)[1]: reward for unit, reward in rows}


def only_run(journal: Path) -> tuple[str, str]:
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT run_id, status FROM runs").fetchall()
    assert len(rows) == 1
    return rows[0][0], rows[0][1]


def started_run(journal: Path) -> str | None:
    """The run's id once its row is committed; None before (no journal yet, or killed before the row)."""
    if not journal.exists():
        return None
    with sqlite3.connect(journal) as db:
        try:
            row = db.execute("SELECT run_id FROM runs").fetchone()
        except sqlite3.OperationalError:
            return None  # killed before the schema was written
    return None if row is None else str(row[0])


def committed(journal: Path) -> int:
    """Episodes the journal holds, read the way `shiftbench runs` would (0 before it has any)."""
    if not journal.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=10) as db:
            return int(db.execute("SELECT count(*) FROM episodes").fetchone()[0])
    except sqlite3.OperationalError:
        return 0  # the schema is not written yet


def assert_complete(journal: Path, expected: dict[str, float]) -> None:
    assert only_run(journal)[1] == "completed"
    assert rewards(journal) == expected
    with sqlite3.connect(journal) as db:
        pending = db.execute("SELECT count(*) FROM units WHERE status != 'done'").fetchone()[0]
        episodes = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        units = db.execute("SELECT count(*) FROM units").fetchone()[0]
    assert pending == 0 and episodes == units


def kill_after(cmd: list[str], journal: Path, target: int) -> bool:
    """Run `cmd`; SIGKILL it once the journal holds `target` episodes. False if it ended by itself first."""
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while process.poll() is None:
            if committed(journal) >= target:
                process.send_signal(signal.SIGSTOP)  # frozen mid-work: nothing more is committed
                if process.poll() is None:
                    process.kill()
                    process.wait()
                    return True
            time.sleep(0.01)
        return False
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_kills_after_committed_episodes_then_resume_give_identical_rewards(built_suite: Path,
                                                                           tmp_path: Path) -> None:
    # A pilot of 10 tasks a window (300 episodes, 29 of the 100 test tasks both methods ran scored apart
    # by what tabular learned) proves what the whole two scenarios (2,180 episodes) did, at a seventh of
    # the work: each of the four kills still lands mid-work, and a bad restore still shows.
    args: Callable[[Path], list[str]] = lambda journal: sweep_args(  # noqa: E731
        built_suite, journal, "blind,tabular", "banking_l1,retail_l1", "--pilot", "10")
    reference = tmp_path / "reference.sqlite"
    subprocess.run(shiftbench("run", *args(reference)), check=True, capture_output=True)
    expected = rewards(reference)
    total = len(expected)
    by_method: dict[str, dict[str, float]] = {}
    for unit, reward in expected.items():
        method, task = unit.split("|", 1)
        by_method.setdefault(method, {})[task] = reward
    learned = {task: reward for task, reward in by_method["tabular"].items() if task in by_method["blind"]}
    assert learned != {task: by_method["blind"][task] for task in learned}  # the restored state shows
    # Kill points spread over the first half: each leaves plenty of work, so each kill lands mid-work.
    targets = [max(1, total * k // (2 * (KILLS + 1))) for k in range(1, KILLS + 1)]
    journal = tmp_path / "killed.sqlite"
    kills, at = 0, []
    for target in targets:
        cmd = (shiftbench("run", *args(journal)) if not journal.exists()
               else shiftbench("resume", only_run(journal)[0], "--journal", str(journal), "--display", "none"))
        killed = kill_after(cmd, journal, target)
        assert killed, f"the run ended before {target} of {total} episodes were committed"
        kills += 1
        at.append(committed(journal))
    subprocess.run(shiftbench("resume", only_run(journal)[0], "--journal", str(journal), "--display", "none"),
                   check=True, capture_output=True)
    assert kills == KILLS and at == sorted(at) and all(n >= t for n, t in zip(at, targets, strict=True))
    assert_complete(journal, expected)


@pytest.mark.slow
@pytest.mark.timeout(RANDOM_MOMENTS_TIMEOUT_S)
@pytest.mark.heavy
def test_sigkill_at_random_moments_then_resume_gives_identical_rewards(built_suite: Path, tmp_path: Path) -> None:
    """Random moments find what chosen ones miss; only the outcome is asserted, not how many kills landed.

    A pilot of 40 tasks a window (every domain, the pitch judge, a learning method, serving blocks and
    window checkpoints as in a full sweep; 2,048 episodes) instead of the full scenarios (3,246): the
    kill moments are drawn over the run's own duration, so the shorter run is killed at the same kinds of
    moment in about half the time."""
    reference = tmp_path / "reference.sqlite"
    methods, scenarios = "blind,oracle,tabular", "banking_l1,retail_l1,pitch_l1"

    def pilot(journal: Path) -> list[str]:
        return sweep_args(built_suite, journal, methods, scenarios, "--pilot", "40")

    started = time.monotonic()
    subprocess.run(shiftbench("run", *pilot(reference)), check=True, capture_output=True)
    duration = time.monotonic() - started
    expected = rewards(reference)
    rng = random.Random(7)
    journal = tmp_path / "killed.sqlite"
    landed: list[int] = []
    for _ in range(RANDOM_KILLS):
        run_id = started_run(journal)
        cmd = (shiftbench("run", *pilot(journal)) if run_id is None
               else shiftbench("resume", run_id, "--journal", str(journal), "--display", "none"))
        process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # Within the first half of a whole pilot's time (a process's start is about a sixth of it): a
            # kill lands before the first commit, inside one, or mid-stream (seen: 0, 0, 1010, 1112, 1560,
            # 1909 of 2,048 episodes committed after the six kills).
            process.wait(timeout=rng.uniform(0.15, 0.5) * duration)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        landed.append(committed(journal) if journal.exists() else 0)
        if started_run(journal) is not None and only_run(journal)[1] == "completed":
            break
    run_id = started_run(journal)
    if run_id is None:
        subprocess.run(shiftbench("run", *pilot(journal)), check=True, capture_output=True)
    elif only_run(journal)[1] != "completed":
        subprocess.run(shiftbench("resume", run_id, "--journal", str(journal), "--display", "none"),
                       check=True, capture_output=True)
    print(f"pilot {duration:.1f} s, {len(expected)} episodes; committed after each kill: {landed}")  # with -s
    assert_complete(journal, expected)

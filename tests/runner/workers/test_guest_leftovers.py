"""Nothing of a run outlives it. A guest that tries to leave processes behind (150 forks and a detached
daemon, `guests.LINGER`) is refused each; when the runner is SIGKILLed mid-sweep, its workers' fork
server and every worker are gone soon after (the server sees its control socket close; each worker dies
with the server), and a run that ends normally leaves none either."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.runner.test_kill_resume import shiftbench
from tests.runner.workers.test_guest_runs import guest_file

GONE_WITHIN_S = 60.0
"""A bound, not the measure: on an idle machine they go within a few milliseconds (bench/README.md)."""


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for child in children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.add(pid)
    return living


def episodes(journal: Path) -> int:
    try:
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("SELECT count(*) FROM episodes").fetchone()[0])
    except sqlite3.Error:
        return 0


def wait_for(condition: object, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_no_process_of_a_run_outlives_a_kill_9_of_its_runner(built_suite: Path, tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    runner = subprocess.Popen(shiftbench("run", "--dataset", str(built_suite), "--scenarios", "retail_l1",
                                         "--methods", f"linger={guests}:LINGER", "--block-size", "1",
                                         "--journal", str(tmp_path / "j.sqlite"), "--display", "none"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # past the guest's first learn (block size 1: after its first serving episode), where it forks
        assert wait_for(lambda: episodes(tmp_path / "j.sqlite") >= 3, 240), "the sweep did not get going"
        started = descendants(runner.pid)
        servers = children(runner.pid)
        workers = set().union(*(children(server) for server in servers))
        assert workers, "no worker is running"
        assert not set().union(*(children(worker) for worker in workers)), "a guest's fork got through"
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        assert wait_for(lambda: not alive(started), GONE_WITHIN_S), f"left behind: {alive(started)}"
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()


def test_a_finished_run_leaves_no_process(built_suite: Path, tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    runner = subprocess.Popen(shiftbench("run", "--dataset", str(built_suite), "--scenarios", "retail_l1",
                                         "--methods", f"counter={guests}:COUNTER", "--pilot", "2",
                                         "--journal", str(tmp_path / "j.sqlite"), "--display", "none"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: set[int] = set()
    while runner.poll() is None:
        seen |= descendants(runner.pid)
        time.sleep(0.05)
    assert runner.returncode == 0
    assert seen, "no worker was seen"
    assert wait_for(lambda: not alive(seen), GONE_WITHIN_S), f"left behind: {alive(seen)}"

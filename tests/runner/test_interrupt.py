"""Ctrl-C on a real sweep: it stops dispatching, finishes what is in flight, ends `interrupted` with exit
code 130, and `resume` completes it. A pilot of 10 tasks a window (390 episodes) leaves a few hundred
episodes to stop and resume, as the whole two scenarios (4,042) did, in a tenth of the time."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def test_sigint_stops_cleanly_and_resume_completes(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    cmd = [sys.executable, "-m", "runner.cli", "run", "--dataset", str(built_suite), "--scenarios",
           "retail_l2,banking_l3", "--methods", "blind,icl_full", "--pilot", "10", "--journal", str(journal),
           "--display", "plain"]
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:  # wait until episodes are being journaled
        if journal.exists():
            try:
                with sqlite3.connect(journal) as db:
                    if db.execute("SELECT count(*) FROM episodes").fetchone()[0] > 20:
                        break
            except sqlite3.OperationalError:
                pass
        time.sleep(0.05)
    assert process.poll() is None, "the sweep ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 130, output
    with sqlite3.connect(journal) as db:
        run_id, status, reason = db.execute("SELECT run_id, status, stop_reason FROM runs").fetchone()
        pending = db.execute("SELECT count(*) FROM units WHERE status = 'pending'").fetchone()[0]
    assert status == "interrupted" and pending > 0, output
    # The hint runs as printed: it names the journal, which is not the default one.
    assert f"`shiftbench resume {run_id} --journal {journal}` continues it" in reason
    assert "Stopping: finishing in-flight episodes" in output

    resumed = subprocess.run([sys.executable, "-m", "runner.cli", "resume", run_id, "--journal", str(journal),
                              "--display", "none"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(journal) as db:
        status = db.execute("SELECT status FROM runs").fetchone()[0]
        pending = db.execute("SELECT count(*) FROM units WHERE status = 'pending'").fetchone()[0]
    assert status == "completed" and pending == 0

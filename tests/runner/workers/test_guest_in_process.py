"""`--methods-in-process` (issue 37, item 8): the run says at start what it gives up; a method that calls
os._exit or loops forever in its context ends its own stream with one line (the call, the method's line
or the limit), and every other stream finishes, as they do with workers."""

from __future__ import annotations

from pathlib import Path

from runner.workers.in_process_guard import GIVES_UP
from tests.runner.workers.test_guest_failures import failure_lines, journaled_failures
from tests.runner.workers.test_guest_runs import guest_file, run


def test_an_exit_and_an_endless_loop_in_the_runner_s_process_end_their_own_streams(built_suite: Path,
                                                                                 tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    journal = tmp_path / "in_process.sqlite"
    methods = f"counter={guests}:COUNTER,exits={guests}:EXITS,spin={guests}:SPIN"
    done = run(built_suite, journal, methods, "--methods-in-process", "--method-context-limit", "1")
    output = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in output, output  # failed streams, not a dead runner
    assert output.count(GIVES_UP) == 1  # said once, before the run
    lines = {line.split("|")[1]: line for line in failure_lines(done.stdout)}
    assert sorted(lines) == ["exits", "spin"], lines
    assert "os._exit(3)" in lines["exits"] and "guests.py:" in lines["exits"], lines["exits"]
    assert "context" in lines["spin"] and "limit of 1 s" in lines["spin"], lines["spin"]
    failed = journaled_failures(journal)
    assert sorted(failed) == ["scripted|exits|retail_l1", "scripted|spin|retail_l1"]


def test_with_workers_the_run_does_not_say_what_in_process_gives_up(built_suite: Path, tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    done = run(built_suite, tmp_path / "workers.sqlite", f"counter={guests}:COUNTER")
    assert done.returncode == 0, done.stderr
    assert GIVES_UP not in done.stdout + done.stderr

"""`run` and `resume` start without the modules only other commands use (issue 14: resume's start).

A fresh interpreter imports the CLI and the sweep, as `shiftbench resume` does before its first episode;
the evidence statistics (numpy), the report and the views must not be loaded by then. This checks which
modules load, never how long they take.
"""

from __future__ import annotations

import subprocess
import sys

NOT_ON_THE_START_PATH = ("numpy", "runner.report", "runner.evidence.run_evidence", "runner.stats.bootstrap",
                         "runner.views.show", "runner.views.episodes", "runner.cli.data_commands", "runner.views.runs")


def test_run_and_resume_start_without_other_commands_modules() -> None:
    code = ("import sys, runner.cli, runner.schedule.sweep; "
            f"print(' '.join(m for m in {NOT_ON_THE_START_PATH!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert loaded == []


def test_a_command_still_finds_what_it_imports_when_run() -> None:
    done = subprocess.run([sys.executable, "-m", "runner.cli", "methods"], check=True, capture_output=True, text=True)
    assert "blind" in done.stdout

"""`methods check` as strict as the run: each guest's broken promise is a FAIL line with its evidence
(never a traceback, exit 1), from the check a run's worker or fresh instances would expose, and it
says how much of the scenario it played."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli import main
from tests.runner.workers.test_guest_runs import guest_file


@pytest.mark.parametrize(("name", "failing", "evidence"), [
    ("SPY", "the same in its worker", "differs in its worker from this process"),
    ("SHARED", "instances are independent", "starts from what it learned (class- or module-level state?)"),
    ("RAISES", "plays the stream", "guests.py:"),
    ("SET_STATE", "plays the stream", "state['tags'] is a set"),
])
def test_a_guest_breaking_a_promise_fails_with_evidence_and_no_traceback(
        name: str, failing: str, evidence: str, built_suite: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    guests = guest_file(tmp_path)
    code = main(["methods", "check", f"{guests}:{name}", "--dataset", str(built_suite), "--pilot", "2"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 1 and "Traceback" not in out + captured.err, out
    assert "of its 720 serving and" in out
    assert "played window" in out or name == "SET_STATE"  # progress while it plays (a set fails the first window)
    failed = {line.split("  ")[1].strip(): line for line in out.splitlines() if line.startswith("FAIL")}
    assert failing in failed and evidence in failed[failing], out
    if name == "RAISES":
        assert "ValueError: planted at record 4" in failed[failing]

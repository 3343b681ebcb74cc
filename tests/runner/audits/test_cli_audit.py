"""`shiftbench audit ...` from the command line: the machine-readable shapes, and bad input as one line."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from runner.cli import main


def test_audit_commands_print_their_json_shapes_and_refuse_bad_input(built_suite: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    journal = str(tmp_path / "j.sqlite")
    assert main(["run", "--models", "scripted:recovering", "--methods", "blind", "--scenarios", "banking_l1",
                 "--dataset", str(built_suite), "--pilot", "1", "--journal", journal, "--display", "none"]) == 0
    with sqlite3.connect(journal) as db:
        run_id = db.execute("SELECT run_id FROM runs").fetchone()[0]
    capsys.readouterr()

    assert main(["audit", "faults", run_id, "--tool", "approve_case", "--fault", "malformed", "--json",
                 "--journal", journal]) == 0
    faults = json.loads(capsys.readouterr().out)
    assert set(faults["verdicts"]) == {"recovered", "escalated", "acted_wrongly", "failed", "missing",
                                       "not_applicable"}
    assert all(isinstance(n, int) for n in faults["verdicts"].values()) and isinstance(faults["cases"], list)

    assert main(["audit", "metamorphic", run_id, "--transform", "irrelevant_detail", "--json",
                 "--journal", journal]) == 0
    meta = json.loads(capsys.readouterr().out)
    assert meta["transform"] == "irrelevant_detail" and meta["checked"] is False
    for relation in ("same_state", "same_actions", "same_output"):
        assert set(meta["relations"][relation]) >= {"pass", "total", "ci"}

    assert main(["audit", "faults", run_id, "--tool", "no_such_tool", "--fault", "error", "--journal", journal]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("shiftbench: error: --tool:") and "\n" not in error
    with sqlite3.connect(journal) as db:  # refused before anything was written
        assert db.execute("SELECT count(*) FROM audits WHERE spec LIKE '%no_such_tool%'").fetchone()[0] == 0
    assert main(["audit", "metamorphic", run_id, "--transform", str(tmp_path / "none.json"),
                 "--journal", journal]) == 2
    assert "--transform" in capsys.readouterr().err

    # `runs rm` takes the run's audits with it: their cases, calls and answers.
    assert main(["runs", "rm", run_id, "--journal", journal]) == 0
    with sqlite3.connect(journal) as db:
        for table in ("audits", "audit_cases", "episode_audits", "model_calls", "response_cache"):
            assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table

"""Only true lines (issue 30 item 6): nothing names a journal or a run before a refusal, Ctrl-C while the
built-in suite is built stops it at once and leaves nothing, and a hint naming a command carries the
`--journal` a journal other than the default needs, so following it literally works."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from bench.mock_provider import serve_mock
from runner.cli import main
from runner.common.home import default_journal
from runner.common.journal_flag import journal_flag
from runner.common.money import usd
from runner.config.settings import SweepConfig
from runner.schedule.sweep import RunOutcome, start_sweep

PRICE = {"input": 0.1, "cached_input": 0.05, "cache_write": 0.1, "output": 0.2}


def dump(journal: Path) -> list[str]:
    with sqlite3.connect(journal) as db:
        return list(db.iterdump())


def test_the_flag_is_empty_only_for_the_default_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert journal_flag(default_journal()) == "" and journal_flag(default_journal().resolve()) == ""
    assert journal_flag(tmp_path / "other.sqlite") == f" --journal {tmp_path / 'other.sqlite'}"


def test_a_journal_that_cannot_be_created_names_no_run(built_suite: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "gone" / "j.sqlite"
    (tmp_path / "gone").mkdir(mode=0o500)  # a folder that exists but takes no new file (root ignores modes)
    for journal in (Path("/proc/shiftbench-nowhere.sqlite"), target):
        code = main(["run", "--dataset", str(built_suite), "--scenarios", "pitch_l1", "--methods", "blind",
                     "--pilot", "1", "--display", "none", "--journal", str(journal)])
        captured = capsys.readouterr()
        if journal == target and code == 0:
            continue  # running as root: the folder took the file, nothing to refuse
        assert code == 2 and captured.out == "", captured.out
        assert len(captured.err.splitlines()) == 1 and str(journal) in captured.err
        assert not journal.exists()


def test_resume_below_the_spend_says_nothing_of_resuming_and_the_budget_hint_names_the_journal(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "paid.sqlite"

    async def capped() -> RunOutcome:
        async with serve_mock() as mock:
            config = SweepConfig(models=("local",), methods=("blind",), scenarios=("retail_l1",),
                                 dataset=str(built_suite), pilot=1, budget=0.006, prices={"local": PRICE},
                                 endpoints={"local": {"kind": "openai-compatible", "model": "m",
                                                      "base_url": mock.base_url + "/v1"}})
            return await start_sweep(config, journal, "none", lambda _: None)

    outcome = anyio.run(capped)
    assert outcome.status == "budget_exhausted"
    assert f"(`shiftbench resume {outcome.run_id} --budget USD --journal {journal}`)" in outcome.reason
    with sqlite3.connect(journal) as db:
        spent = db.execute("SELECT SUM(cost_usd) FROM model_calls").fetchone()[0]
    before = dump(journal)
    # The exact state: a cap at or below what the run spent (the server is gone: nothing may reach it).
    for cap in (spent / 2, spent):
        code = main(["resume", outcome.run_id, "--journal", str(journal), "--budget", repr(cap), "--display", "none"])
        captured = capsys.readouterr()
        assert code == 2 and captured.out == ""
        assert captured.err.count("\n") == 1 and f"already spent ${spent:.4f}" in captured.err
        assert f"(`shiftbench resume {outcome.run_id} --budget USD --journal {journal}`)" in captured.err
        assert f"of its {usd(cap)} cap" in captured.err and "$0.00 cap" not in captured.err  # the cap's own digits
    assert dump(journal) == before


def test_ctrl_c_while_the_suite_is_built_stops_at_once_and_leaves_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "runner.cli", "run", "--display", "none"], cwd=tmp_path,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("Building the built-in suite"), first
    process.send_signal(signal.SIGINT)  # the build takes seconds of CPU: the signal lands inside it
    out, err = process.communicate(timeout=120)
    # Before the fix the build ran on, the sweep started and completed: a journal, a run id, a report.
    assert process.returncode == 130, out + err
    assert out == "" and err == "shiftbench: interrupted\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == [], "a partial suite or a journal was left"

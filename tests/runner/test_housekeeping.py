"""`runs rm` and `journal vacuum` on a journal holding a finished offline run and a paid run stopped by
its budget cap: the journal shrinks, the other run's rows stay whole, and it resumes to the results an
uninterrupted run gets."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from bench.mock_provider import serve_mock
from runner.cli import main
from runner.config.settings import SweepConfig
from runner.journal.housekeeping import journal_bytes, remove_run, vacuum_journal
from runner.journal.lease import Lease, lease_meta_key
from runner.schedule.sweep import resume_sweep, start_sweep
from runner.views.runs import list_runs, render_runs_text
from simulators.errors import ShiftbenchInputError
from tests.runner.test_paid_sweep import KEY, PricedReplies, config_for
from tests.support import episode_rewards, quiet

TABLES = ("runs", "units", "episodes", "model_calls", "checkpoints", "response_cache")


def rows_per_table(journal: Path, run_id: str) -> dict[str, int]:
    with sqlite3.connect(journal) as db:
        return {table: db.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", (run_id,)).fetchone()[0]
                for table in TABLES}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


async def test_rm_and_vacuum_shrink_the_journal_and_a_resumed_run_is_unaffected(built_suite: Path,
                                                                                 tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    async with serve_mock(PricedReplies(output_tokens=16_000)) as mock:
        reference = await start_sweep(config_for(mock.base_url, built_suite), tmp_path / "ref.sqlite", "none", quiet)
        with sqlite3.connect(tmp_path / "ref.sqlite") as db:
            full_cost = db.execute("SELECT SUM(cost_usd) FROM model_calls").fetchone()[0]
        capped = await start_sweep(config_for(mock.base_url, built_suite, budget=full_cost / 3, concurrency=1),
                                   journal, "none", quiet)
        assert capped.status == "budget_exhausted"
        offline = SweepConfig(methods=("blind", "icl_full"), scenarios=("retail_l1", "banking_l1"),
                              dataset=str(built_suite), pilot=3, labels=("throwaway", "try icl"))
        throwaway = await start_sweep(offline, journal, "none", quiet)
        kept_before = rows_per_table(journal, capped.run_id)

        listed = {run.run_id: run for run in await list_runs(journal)}
        assert listed[throwaway.run_id].labels == ["throwaway", "try icl"]
        assert listed[throwaway.run_id].scenarios == ["retail_l1", "banking_l1"]
        assert listed[capped.run_id].stop_reason and "budget_exhausted" in render_runs_text(list(listed.values()))

        size_before = journal_bytes(journal)
        removed = await remove_run(journal, throwaway.run_id)
        assert removed.episodes > 0
        assert rows_per_table(journal, throwaway.run_id) == dict.fromkeys(TABLES, 0)
        assert rows_per_table(journal, capped.run_id) == kept_before
        vacuumed = await vacuum_journal(journal)
        # The removal itself grows the write-ahead log; the vacuum folds it in and drops the freed pages.
        assert vacuumed.after_bytes < size_before <= vacuumed.before_bytes

        resumed = await resume_sweep(capped.run_id, journal, "none", quiet, budget=full_cost * 3)
    assert resumed.status == reference.status == "completed"
    assert episode_rewards(journal) == episode_rewards(tmp_path / "ref.sqlite")


async def test_removing_a_run_in_progress_is_refused(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    done = await start_sweep(SweepConfig(methods=("blind",), scenarios=("retail_l1",), dataset=str(built_suite),
                                         pilot=1), journal, "none", quiet)
    with sqlite3.connect(journal) as db:  # as if this test's own process were still writing the run: its lease too
        db.execute("UPDATE runs SET status = 'running', pid = ? WHERE run_id = ?", (os.getpid(), done.run_id))
        db.execute("UPDATE meta SET value = ? WHERE key = ?",
                   (Lease(socket.gethostname(), os.getpid(), time.time(), 60.0).to_json(), lease_meta_key(done.run_id)))
    with pytest.raises(ShiftbenchInputError, match="is being written by process"):
        await remove_run(journal, done.run_id)
    assert rows_per_table(journal, done.run_id)["episodes"] > 0


def test_cli_runs_rm_and_vacuum(built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "retail_l1", "--methods", "blind",
                 "--pilot", "1", "--label", "smoke", "--display", "none", "--journal", str(journal)]) == 0
    with sqlite3.connect(journal) as db:
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    capsys.readouterr()
    assert main(["runs", "--journal", str(journal)]) == 0
    assert "smoke" in capsys.readouterr().out
    assert main(["runs", "--journal", str(journal), "rm", "r-nope"]) == 2
    assert "no run 'r-nope'" in capsys.readouterr().err
    assert main(["runs", "rm", run_id, "--journal", str(journal)]) == 0
    assert f"Removed run {run_id}" in capsys.readouterr().out
    assert main(["journal", "vacuum", "--journal", str(journal)]) == 0
    assert "Vacuumed" in capsys.readouterr().out
    assert main(["runs", "--journal", str(journal)]) == 0
    assert "no runs in this journal" in capsys.readouterr().out

"""A journal written before stream replicas (schema 7, no `units.replica`) is upgraded in place the first
time it is opened: its runs report as they did and an interrupted one resumes to the same rewards."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from runner.config.settings import SweepConfig
from runner.journal import SCHEMA_VERSION
from runner.report import build_report, render_text
from runner.schedule.sweep import resume_sweep, start_sweep
from tests.support import episode_rewards, quiet


def as_schema_7(journal: Path, run_id: str) -> None:
    """Turn a journal into what schema 7 wrote (no replica column), with its run cut short: the last
    test episodes gone and their units pending, as a crash leaves them. Test-only raw SQL."""
    with sqlite3.connect(journal) as db:
        db.execute("DELETE FROM episodes WHERE unit_id IN (SELECT unit_id FROM units WHERE phase = 'test' "
                   "ORDER BY rowid DESC LIMIT 3)")
        db.execute("UPDATE units SET status = 'pending' WHERE unit_id NOT IN (SELECT unit_id FROM episodes)")
        db.execute("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", (run_id,))
        db.execute("ALTER TABLE units DROP COLUMN replica")
        db.execute("ALTER TABLE model_calls DROP COLUMN retried")
        db.execute("ALTER TABLE model_calls DROP COLUMN route")
        for table in ("batch_items", "provider_batches"):
            db.execute(f"DROP TABLE {table}")
        db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")


def columns(journal: Path) -> tuple[str, list[str]]:
    with sqlite3.connect(journal) as db:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        names = [row[1] for row in db.execute("PRAGMA table_info(units)")]
    return str(version), names


async def test_a_schema_7_journal_reports_and_resumes_unchanged(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    config = SweepConfig(methods=("tabular",), scenarios=("retail_l1",), dataset=str(built_suite), pilot=2)
    outcome = await start_sweep(config, journal, "none", quiet)
    expected = episode_rewards(journal)
    as_schema_7(journal, outcome.run_id)
    assert columns(journal)[0] == "7" and "replica" not in columns(journal)[1]
    cut = episode_rewards(journal)
    assert len(cut) == len(expected) - 3

    report = render_text(await build_report(journal, outcome.run_id))  # a reader upgrades it first
    version, names = columns(journal)
    assert version == SCHEMA_VERSION and "replica" in names
    assert "retail_l1" in report
    with sqlite3.connect(journal) as db:
        assert db.execute("SELECT DISTINCT replica FROM units").fetchall() == [(0,)]

    resumed = await resume_sweep(outcome.run_id, journal, "none", quiet)
    assert resumed.status == "completed"
    assert episode_rewards(journal) == expected


async def test_a_schema_8_journal_gets_the_retried_column_and_reports(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    config = SweepConfig(methods=("blind",), scenarios=("pitch_l1",), dataset=str(built_suite), pilot=1)
    outcome = await start_sweep(config, journal, "none", quiet)
    with sqlite3.connect(journal) as db:  # what schema 8 wrote: no model_calls.retried
        db.execute("ALTER TABLE model_calls DROP COLUMN retried")
        db.execute("ALTER TABLE model_calls DROP COLUMN route")
        db.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    report = await build_report(journal, outcome.run_id)
    with sqlite3.connect(journal) as db:
        names = [row[1] for row in db.execute("PRAGMA table_info(model_calls)")]
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == SCHEMA_VERSION and "retried" in names
    assert report.retries == []  # the offline model sends no calls


async def test_a_schema_9_journal_gets_the_batch_tables_and_route(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    config = SweepConfig(methods=("blind",), scenarios=("pitch_l1",), dataset=str(built_suite), pilot=1)
    outcome = await start_sweep(config, journal, "none", quiet)
    with sqlite3.connect(journal) as db:  # what schema 9 wrote: no route, no batch tables
        db.execute("ALTER TABLE model_calls DROP COLUMN route")
        for table in ("batch_items", "provider_batches"):
            db.execute(f"DROP TABLE {table}")
        db.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    await build_report(journal, outcome.run_id)
    with sqlite3.connect(journal) as db:
        names = [row[1] for row in db.execute("PRAGMA table_info(model_calls)")]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == SCHEMA_VERSION == "10"
    assert "route" in names and {"provider_batches", "batch_items"} <= tables

from __future__ import annotations

import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from runner.journal import Batch, JournalError, open_journal, read_only
from runner.journal.schema import SCHEMA


async def test_journal_is_private_and_group_commits_concurrent_batches(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "j.sqlite"
    async with open_journal(path) as journal:
        async def write(i: int) -> None:
            await journal.commit(Batch().set_meta(f"k{i}", str(i)))

        async with anyio.create_task_group() as group:
            for i in range(200):
                group.start_soon(write, i)
        rows = await journal.fetchall("SELECT count(*) FROM meta WHERE key LIKE 'k%'")
        assert rows[0][0] == 200
        assert journal.commits < 200  # batches that arrived together shared a transaction
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_a_failing_batch_fails_alone_and_atomically(tmp_path: Path) -> None:
    async with open_journal(tmp_path / "j.sqlite") as journal:
        bad = Batch().add("INSERT INTO meta (key, value) VALUES ('a', '1')").add("INSERT INTO nowhere VALUES (1)")
        with pytest.raises(sqlite3.OperationalError, match="no such table: nowhere"):
            await journal.commit(bad)
        await journal.commit(Batch().set_meta("b", "2"))
        keys = {r[0] for r in await journal.fetchall("SELECT key FROM meta")}
    assert "a" not in keys and "b" in keys


async def test_unreadable_journal_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(JournalError, match="garbage.sqlite: not a shiftbench journal"):
        async with open_journal(path):
            pass
    with pytest.raises(JournalError, match="no journal here"):
        async with read_only(tmp_path / "missing.sqlite"):
            pass


async def test_a_journal_of_another_schema_version_is_refused_by_readers_and_writers(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    async with open_journal(path) as journal:
        await journal.commit(Batch().add("UPDATE meta SET value = '0' WHERE key = 'schema_version'"))
    with pytest.raises(JournalError, match="journal schema version 0, this shiftbench reads"):
        async with read_only(path):
            pass
    with pytest.raises(JournalError, match="journal schema version 0, this shiftbench reads"):
        async with open_journal(path, create=False):
            pass


async def test_another_programs_database_gets_no_tables_of_ours(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('mine')")
    with pytest.raises(JournalError, match=r"notes.db: an SQLite database that is not a shiftbench journal "
                                           r"\(tables: notes\)"):
        async with open_journal(path):
            pass
    with sqlite3.connect(path) as db:
        assert [row[0] for row in db.execute("SELECT name FROM sqlite_master")] == ["notes"]
        assert db.execute("SELECT body FROM notes").fetchall() == [("mine",)]


async def test_a_journal_whose_creation_was_cut_short_is_completed(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with sqlite3.connect(path) as db:  # the schema's first tables, no version row: the process died there
        db.executescript(";".join(SCHEMA.split(";")[:3]))
        assert {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == {
            "meta", "runs", "units"}
    async with open_journal(path) as journal:
        assert await journal.read.runs() == []


async def test_an_urgent_batch_never_commits_before_what_was_handed_over_earlier(tmp_path: Path) -> None:
    async with open_journal(tmp_path / "j.sqlite") as journal:
        for i in range(50):
            await journal.enqueue(Batch().set_meta(f"c{i}", "call"))
        await journal.commit(Batch(urgent=True).set_meta("episode", "e"))
        # When the urgent commit returns, every row handed over before it is durable too.
        rows = await journal.fetchall("SELECT count(*) FROM meta WHERE value = 'call'")
        assert rows[0][0] == 50


class _HeldParams:
    """Statement parameters that hold the writer's thread mid-transaction until released."""

    def __init__(self, *values: Any) -> None:
        self.values = values
        self.reached = threading.Event()
        self.release = threading.Event()

    def __len__(self) -> int:
        self.reached.set()
        self.release.wait(timeout=60)
        return len(self.values)

    def __getitem__(self, index: int) -> Any:
        return self.values[index]


async def test_reads_never_see_a_transaction_the_writer_has_not_committed(tmp_path: Path) -> None:
    async with open_journal(tmp_path / "j.sqlite") as journal:
        held = _HeldParams("second", "2")
        batch = Batch().set_meta("first", "1").add("INSERT INTO meta (key, value) VALUES (?, ?)", held)
        async with anyio.create_task_group() as group:
            group.start_soon(journal.commit, batch)
            await anyio.to_thread.run_sync(held.reached.wait, 60)
            # The writer has applied 'first' in its open transaction and is holding on 'second'.
            seen = {row[0] for row in await journal.fetchall("SELECT key FROM meta")}
            held.release.set()
        assert "first" not in seen
        after = {row[0] for row in await journal.fetchall("SELECT key FROM meta")}
    assert {"first", "second"} <= after


def test_per_episode_call_sums_look_calls_up_by_unit_not_by_scanning_the_run(tmp_path: Path) -> None:
    # Without an index on (run_id, unit_id) each episode's sums read every call of the run: show and export
    # of 2,000 episodes with 20,000 calls took 14.7 s, estimate's projection 3.8 s, and both grow with the
    # square of the run. The plan, not a timing, is what a loaded machine can check.
    from runner.journal.call_queries import _EPISODE_CALLS
    from runner.journal.view_queries import _EPISODE_DETAILS

    connection = sqlite3.connect(tmp_path / "plan.db")
    connection.executescript(SCHEMA)
    details = connection.execute(f"EXPLAIN QUERY PLAN {_EPISODE_DETAILS}", ("r",) * 16 + (-1, 0)).fetchall()
    calls = connection.execute(f"EXPLAIN QUERY PLAN {_EPISODE_CALLS}", ("r",)).fetchall()
    for plan in (details, calls):
        steps = [str(step[-1]) for step in plan]
        assert any("calls_by_unit" in step for step in steps), steps
        assert not any(step.startswith("SCAN c") for step in steps), steps

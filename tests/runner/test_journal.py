from __future__ import annotations

import stat
from pathlib import Path

import anyio
import pytest

from runner.journal import Batch, JournalError, open_journal, read_only


async def test_journal_is_private_and_group_commits_concurrent_batches(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "j.sqlite"
    async with open_journal(path) as journal:
        async def write(i: int) -> None:
            await journal.commit(Batch().add("INSERT INTO meta (key, value) VALUES (?, ?)", (f"k{i}", str(i))))

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
        with pytest.raises(Exception, match="nowhere"):
            await journal.commit(bad)
        await journal.commit(Batch().add("INSERT INTO meta (key, value) VALUES ('b', '2')"))
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


async def test_an_urgent_batch_never_commits_before_what_was_handed_over_earlier(tmp_path: Path) -> None:
    async with open_journal(tmp_path / "j.sqlite") as journal:
        for i in range(50):
            await journal.enqueue(Batch().add("INSERT INTO meta (key, value) VALUES (?, 'call')", (f"c{i}",)))
        await journal.commit(Batch(urgent=True).add("INSERT INTO meta (key, value) VALUES ('episode', 'e')"))
        # When the urgent commit returns, every row handed over before it is durable too.
        rows = await journal.fetchall("SELECT count(*) FROM meta WHERE value = 'call'")
        assert rows[0][0] == 50

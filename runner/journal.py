"""The journal: one SQLite file (WAL) that is the single source of truth of every run.

One writer task owns the connection. Everyone else hands it a `Batch` of statements and awaits its
commit: batches that arrive together are committed in one transaction (group commit), which keeps
the writer off the critical path while every caller still knows its rows are durable when it goes on.
A crash at any moment leaves the file at the last committed transaction.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite
import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from runner.errors import sole_error
from simulators.errors import ShiftbenchInputError

__all__ = ["Batch", "Journal", "JournalError", "SCHEMA_VERSION", "open_journal", "read_only"]

SCHEMA_VERSION = "2"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    status TEXT NOT NULL, stop_reason TEXT NOT NULL DEFAULT '',
    config TEXT NOT NULL, config_hash TEXT NOT NULL,
    dataset_path TEXT NOT NULL, dataset_fingerprint TEXT NOT NULL, dataset_files TEXT NOT NULL DEFAULT '{}',
    code_version TEXT NOT NULL, budget_usd REAL, pid INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS units (
    run_id TEXT NOT NULL, unit_id TEXT NOT NULL, stream_id TEXT NOT NULL,
    model TEXT NOT NULL, method TEXT NOT NULL, scenario TEXT NOT NULL,
    phase TEXT NOT NULL, window INTEGER NOT NULL, seq INTEGER NOT NULL,
    task_id TEXT NOT NULL, position INTEGER NOT NULL, category TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, unit_id)
);
CREATE INDEX IF NOT EXISTS units_by_stream ON units (run_id, stream_id, phase, status);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT NOT NULL, unit_id TEXT NOT NULL, stream_id TEXT NOT NULL,
    reward REAL NOT NULL, judge TEXT NOT NULL, category TEXT NOT NULL,
    turns INTEGER NOT NULL, tool_calls INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL, cached_input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL, latency_s REAL NOT NULL, end_reason TEXT NOT NULL,
    record BLOB NOT NULL, grade_details BLOB NOT NULL, finished_at REAL NOT NULL,
    PRIMARY KEY (run_id, unit_id)
);
CREATE TABLE IF NOT EXISTS model_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, unit_id TEXT NOT NULL,
    stream_id TEXT NOT NULL, purpose TEXT NOT NULL, model TEXT NOT NULL, request_hash TEXT NOT NULL,
    status TEXT NOT NULL, attempts INTEGER NOT NULL, from_cache INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL, cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL, latency_s REAL NOT NULL, created_at REAL NOT NULL, error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS calls_by_run ON model_calls (run_id, purpose);
CREATE TABLE IF NOT EXISTS checkpoints (
    run_id TEXT NOT NULL, stream_id TEXT NOT NULL, label TEXT NOT NULL,
    position INTEGER NOT NULL, state BLOB NOT NULL,
    PRIMARY KEY (run_id, stream_id, label)
);
CREATE TABLE IF NOT EXISTS response_cache (
    request_hash TEXT PRIMARY KEY, run_id TEXT NOT NULL, unit_id TEXT NOT NULL, model TEXT NOT NULL,
    response BLOB NOT NULL, created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS cache_by_unit ON response_cache (run_id, unit_id);
"""


class JournalError(ShiftbenchInputError):
    """The journal file cannot be used (unreadable, not a journal, newer schema)."""


Statement = tuple[str, Sequence[Any]]


@dataclass
class Batch:
    """Statements committed together, atomically. `many` rows go through executemany."""

    statements: list[Statement] = field(default_factory=list)
    many: list[tuple[str, list[Sequence[Any]]]] = field(default_factory=list)
    urgent: bool = False
    """On the critical path (a serving block): committed ahead of the other batches waiting with it."""

    def add(self, sql: str, params: Sequence[Any] = ()) -> Batch:
        self.statements.append((sql, params))
        return self

    def add_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> Batch:
        self.many.append((sql, list(rows)))
        return self


@dataclass
class _Pending:
    batch: Batch
    done: anyio.Event = field(default_factory=anyio.Event)
    error: BaseException | None = None
    awaited: bool = True


class Journal:
    """Write through `commit`; read through `fetchall` / `fetchone` (same connection, serialized)."""

    def __init__(self, path: Path, connection: aiosqlite.Connection,
                 sender: MemoryObjectSendStream[_Pending]) -> None:
        self.path = path
        self._connection = connection
        self._sender = sender
        self.commits = 0
        self.batches = 0
        self._deferred_error: BaseException | None = None

    async def commit(self, batch: Batch) -> None:
        """Hand a batch to the writer and wait until it is durable."""
        self._raise_deferred()
        pending = _Pending(batch)
        await self._sender.send(pending)
        await pending.done.wait()
        if pending.error is not None:
            raise pending.error

    async def enqueue(self, batch: Batch) -> None:
        """Hand a batch to the writer without waiting for it. For rows whose loss in a crash costs
        nothing but a repeat (a model call's record while its episode is still in flight): the writer
        commits in arrival order, so they are durable before any batch committed after them. A failure
        is raised by the next `commit`."""
        self._raise_deferred()
        await self._sender.send(_Pending(batch, awaited=False))

    def _raise_deferred(self) -> None:
        if self._deferred_error is not None:
            error, self._deferred_error = self._deferred_error, None
            raise error

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        async with self._connection.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        async with self._connection.execute(sql, params) as cursor:
            return await cursor.fetchone()

    async def _write_loop(self, receiver: MemoryObjectReceiveStream[_Pending]) -> None:
        async with receiver:
            async for first in receiver:
                group = [first]
                while len(group) < 256:
                    try:
                        group.append(receiver.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                # A serving block waits for its commit before the next block may start: commit up to the
                # last urgent batch first, so it does not wait for the batches that arrived after it.
                # Arrival order is kept (a call's row is never committed after the episode that made it).
                cut = max((i + 1 for i, p in enumerate(group) if p.batch.urgent), default=0)
                for part in (group[:cut], group[cut:]):
                    if part:
                        await self._commit_group(part)

    async def _commit_group(self, group: list[_Pending]) -> None:
        # Shielded: a cancelled run must not leave a transaction half-applied or a caller waiting.
        with anyio.CancelScope(shield=True):
            try:
                await self._apply(group)
            except Exception:
                await self._connection.rollback()
                # Apply one by one so a bad batch fails only its own caller.
                for pending in group:
                    try:
                        await self._apply([pending])
                    except Exception as exc:
                        await self._connection.rollback()
                        pending.error = exc
            for pending in group:
                if pending.error is not None and not pending.awaited and self._deferred_error is None:
                    self._deferred_error = pending.error
                pending.done.set()

    async def _apply(self, group: list[_Pending]) -> None:
        connection = self._connection
        await connection.execute("BEGIN")
        for pending in group:
            for sql, params in pending.batch.statements:
                await connection.execute(sql, params)
            for sql, rows in pending.batch.many:
                await connection.executemany(sql, rows)
        await connection.commit()
        self.commits += 1
        self.batches += len(group)


def _create_private(path: Path) -> None:
    """Create the journal file readable by its owner only, before SQLite opens it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chmod(path, 0o600)


def _prepare(path: Path, create: bool) -> None:
    if create:
        try:
            _create_private(path)
        except OSError as exc:
            raise JournalError(f"{path}: cannot create the journal ({exc.strerror}); "
                               "pass --journal PATH in a writable folder") from exc
    elif not path.is_file():
        raise JournalError(f"{path}: no journal here; pass --journal PATH to the one your run printed")


async def _connect(path: Path, create: bool) -> aiosqlite.Connection:
    _prepare(path, create)
    connection = await aiosqlite.connect(path, isolation_level=None)
    connection.row_factory = sqlite3.Row
    try:
        await connection.execute("PRAGMA journal_mode=WAL")
        await connection.execute("PRAGMA synchronous=NORMAL")
        await connection.execute("PRAGMA busy_timeout=10000")
        await connection.executescript(SCHEMA)
        await _check_version(connection, path)
    except sqlite3.DatabaseError as exc:
        await connection.close()
        raise JournalError(f"{path}: not a shiftbench journal or damaged ({exc}); "
                           "pass --journal PATH to a journal file, or a new path to start one") from exc
    except BaseException:
        await connection.close()
        raise
    return connection


async def _check_version(connection: aiosqlite.Connection, path: Path) -> None:
    await connection.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                             (SCHEMA_VERSION,))
    async with connection.execute("SELECT value FROM meta WHERE key = 'schema_version'") as cursor:
        row = await cursor.fetchone()
    if row is None or row[0] != SCHEMA_VERSION:
        found = row[0] if row else "none"
        raise JournalError(f"{path}: journal schema version {found}, this shiftbench reads "
                           f"{SCHEMA_VERSION}; use a shiftbench of the version that wrote it")


@asynccontextmanager
async def open_journal(path: Path | str,
                       create: bool = True) -> AsyncIterator[Journal]:
    """Open (or create) a journal and run its writer until the block exits."""
    path = Path(path)
    connection = await _connect(path, create)
    sender, receiver = anyio.create_memory_object_stream[_Pending](1024)
    journal = Journal(path, connection, sender)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(journal._write_loop, receiver)
            try:
                yield journal
            finally:
                await sender.aclose()
    except BaseExceptionGroup as group_error:
        # The task group wraps whatever the caller's block raised; hand the caller its own error back
        # (a ShiftbenchInputError must still reach the CLI as itself).
        raise sole_error(group_error) from None
    finally:
        with anyio.CancelScope(shield=True):
            await connection.close()


@asynccontextmanager
async def read_only(path: Path | str) -> AsyncIterator[aiosqlite.Connection]:
    """A reader's connection (reports, `runs`): never blocks the writer under WAL."""
    path = Path(path)
    _prepare(path, create=False)
    try:
        connection = await aiosqlite.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path}: cannot be opened ({exc})") from exc
    connection.row_factory = sqlite3.Row
    try:
        try:
            async with connection.execute("SELECT value FROM meta WHERE key = 'schema_version'") as cursor:
                row = await cursor.fetchone()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{path}: not a shiftbench journal or damaged ({exc})") from exc
        if row is None or row[0] != SCHEMA_VERSION:
            found = row[0] if row else "none"
            raise JournalError(f"{path}: journal schema version {found}, this shiftbench reads "
                               f"{SCHEMA_VERSION}; use a shiftbench of the version that wrote it")
        yield connection
    finally:
        await connection.close()


def now() -> float:
    return time.time()

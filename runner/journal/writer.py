"""The writer: one task owns the write connection; everyone else hands it a `Batch` and awaits its commit.

Batches that arrive together are committed in one transaction (group commit), which keeps the writer
off the critical path while every caller still knows its rows are durable when it goes on; urgent
batches (a serving block) are committed ahead of those that arrived after them, arrival order kept.
A crash at any moment leaves the file at the last committed transaction. A transaction is applied
in one hop to the writer's thread (its statements, the commit, a rollback and the one-by-one retry
after a failure), so a serving block pays one round trip however many rows it holds. Reads go
through `read`, a `Reader` on a connection of its own.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from runner.common.errors import sole_error
from runner.common.files import disk_full
from runner.journal.batch import Batch
from runner.journal.media import JournalFull, told, wal_of
from runner.journal.reader import Reader
from runner.journal.schema import connect_reader, connect_writer

__all__ = ["Handed", "Journal", "JournalObserver", "open_journal", "read_only"]

GROUP_LIMIT = 256
"""Batches folded into one transaction at most."""


class JournalObserver(Protocol):
    """A meter on the journal (bench/): sees every batch handed over and how long committers waited."""

    def committed(self, batch: Batch, waited_s: float) -> None: ...

    def enqueued(self, batch: Batch) -> None: ...

    def read(self, seconds: float) -> None: ...


class _Transactions:
    """The writer's side of the connection, run in its thread: whole groups, one call each."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.commits = 0
        self.batches = 0

    def commit_group(self, batches: Sequence[Batch]) -> list[BaseException | None]:
        """Commit the batches in one transaction; if that fails, each in its own, so a bad batch fails
        only its own caller. Returns each batch's error (None: committed)."""
        try:
            self._apply(batches)
            return [None] * len(batches)
        except Exception:
            self._rollback()
        errors: list[BaseException | None] = []
        for batch in batches:
            try:
                self._apply([batch])
                errors.append(None)
            except Exception as exc:
                self._rollback()
                errors.append(exc)
        return errors

    def _apply(self, batches: Sequence[Batch]) -> None:
        connection = self.connection
        connection.execute("BEGIN")
        for batch in batches:
            for _kind, sql, params in batch.statements:
                connection.execute(sql, params)
            for sql, rows in batch.many:
                connection.executemany(sql, rows)
        connection.execute("COMMIT")
        self.commits += 1
        self.batches += len(batches)

    def _rollback(self) -> None:
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")


@dataclass
class _Pending:
    batch: Batch
    done: anyio.Event = field(default_factory=anyio.Event)
    error: BaseException | None = None
    awaited: bool = True


class Handed:
    """A batch the writer has, maybe not committed yet (`Journal.hand_over`)."""

    def __init__(self, pending: _Pending, observer: JournalObserver | None) -> None:
        self._pending = pending
        self._observer = observer

    async def durable(self, observe: bool = True) -> None:
        """Wait until the batch is committed; raise its error if it failed. `observe=False`: a second
        waiter, not counted by the meter (bench/), which times the one on the serving path."""
        started = time.perf_counter()
        await self._pending.done.wait()
        if observe and self._observer is not None:
            self._observer.committed(self._pending.batch, time.perf_counter() - started)
        if self._pending.error is not None:
            raise self._pending.error


class Journal:
    """Write through `commit` / `enqueue` with a `Batch` of typed rows; read through `read` (named
    queries on a read-only connection that sees committed rows only)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, reader: Reader,
                 sender: MemoryObjectSendStream[_Pending]) -> None:
        self.path = path
        self.read = reader
        self._transactions = _Transactions(connection)
        self._thread = anyio.CapacityLimiter(1)
        """The writer's own worker thread slot: its hops never queue behind other thread work."""
        self._sender = sender
        self.writer_s = 0.0
        """Seconds the writer spent applying and committing transactions."""
        self._observer: JournalObserver | None = None
        self._deferred_error: BaseException | None = None

    @property
    def commits(self) -> int:
        """Transactions committed."""
        return self._transactions.commits

    @property
    def batches(self) -> int:
        """Batches committed (batches / commits: how well group commit folds them)."""
        return self._transactions.batches

    def observe(self, observer: JournalObserver | None) -> None:
        """Attach a meter (bench/) to every commit, hand-over and read; None detaches it."""
        self._observer = observer
        self.read.observer = observer.read if observer is not None else None

    async def commit(self, batch: Batch) -> None:
        """Hand a batch to the writer and wait until it is durable."""
        self._raise_deferred()
        pending = _Pending(batch)
        started = time.perf_counter()
        await self._sender.send(pending)
        await pending.done.wait()
        if self._observer is not None:
            self._observer.committed(batch, time.perf_counter() - started)
        if pending.error is not None:
            raise pending.error

    async def hand_over(self, batch: Batch) -> Handed:
        """Hand a batch to the writer and go on; `await handed.durable()` when it must be committed. For a
        serving block: the next block runs while it is written, which is safe because the writer commits
        in arrival order (urgent batches too, among themselves), so a crash that loses this block loses
        every block handed over after it as well, and a resume runs them again from here."""
        self._raise_deferred()
        pending = _Pending(batch)
        await self._sender.send(pending)
        return Handed(pending, self._observer)

    async def enqueue(self, batch: Batch) -> None:
        """Hand a batch to the writer without waiting for it. For rows whose loss in a crash costs
        nothing but a repeat (a model call's record while its episode is still in flight): the writer
        commits in arrival order, so they are durable before any batch committed after them. A failure
        is raised by the next `commit`."""
        self._raise_deferred()
        if self._observer is not None:
            self._observer.enqueued(batch)
        await self._sender.send(_Pending(batch, awaited=False))

    async def fetchall(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """Raw SQL on the read connection: for tests' assertions. Source code uses a named query."""
        return await self.read.fetchall(sql, params)

    async def fetchone(self, sql: str, params: Any = ()) -> tuple[Any, ...] | None:
        """Raw SQL on the read connection: for tests' assertions. Source code uses a named query."""
        return await self.read.fetchone(sql, params)

    def _raise_deferred(self) -> None:
        if self._deferred_error is not None:
            error, self._deferred_error = self._deferred_error, None
            raise error

    async def _write_loop(self, receiver: MemoryObjectReceiveStream[_Pending]) -> None:
        async with receiver:
            async for first in receiver:
                group = [first]
                while len(group) < GROUP_LIMIT:
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
            started = time.perf_counter()
            errors = await anyio.to_thread.run_sync(self._transactions.commit_group, [p.batch for p in group],
                                                    limiter=self._thread)
            self.writer_s += time.perf_counter() - started
            for pending, error in zip(group, errors, strict=True):
                if isinstance(error, OSError | sqlite3.Error) and disk_full(error, self.path):
                    error = JournalFull(self.path, error)
                pending.error = error
                if pending.error is not None and not pending.awaited and self._deferred_error is None:
                    self._deferred_error = pending.error
                pending.done.set()


@asynccontextmanager
async def open_journal(path: Path | str, create: bool = True) -> AsyncIterator[Journal]:
    """Open (or create) a journal, with its reader, and run its writer until the block exits."""
    path = Path(path)
    had_wal = wal_of(path).exists()
    connection = await anyio.to_thread.run_sync(connect_writer, path, create)
    try:
        reader_connection = await connect_reader(path)
    except BaseException:
        connection.close()
        raise
    sender, receiver = anyio.create_memory_object_stream[_Pending](1024)
    journal = Journal(path, connection, Reader(reader_connection), sender)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(journal._write_loop, receiver)
            try:
                yield journal
            finally:
                await sender.aclose()
    except BaseExceptionGroup as group_error:
        # The task group wraps whatever the caller's block raised; hand the caller its own error back
        # (a ShiftbenchInputError must still reach the CLI as itself; damage found on the way as its line).
        raise told(path, sole_error(group_error), had_wal) from None
    finally:
        with anyio.CancelScope(shield=True):
            await reader_connection.close()
            await anyio.to_thread.run_sync(connection.close)


@asynccontextmanager
async def read_only(path: Path | str) -> AsyncIterator[Reader]:
    """A reader of a journal no writer of this process holds (reports, `runs`): never blocks a writer."""
    path = Path(path)
    had_wal = wal_of(path).exists()
    connection = await connect_reader(path)
    try:
        yield Reader(connection)
    except sqlite3.DatabaseError as exc:
        error = told(path, exc, had_wal)  # a page found damaged by a query, after the journal opened
        if error is exc:
            raise
        raise error from exc
    finally:
        await connection.close()

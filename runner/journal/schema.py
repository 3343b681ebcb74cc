"""The journal's tables, its schema version, and how a connection to it is opened (writer or reader).

A journal written by another schema version is refused with one line naming the file; the version
changes only when the tables do. A journal of an older version that `UPGRADES` knows is brought up to
date in place the first time it is opened (one transaction of added columns with their defaults, so
every run in it reads as it did), by a writer or, where the file is writable, by a reader.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import aiosqlite
import anyio

from runner.common.files import disk_full
from runner.journal.media import (
    JournalError,
    JournalFull,
    cannot_open,
    damaged,
    is_damage,
    read_only_uri,
    read_uri,
    recover_hint,
    refuse_read_only_journal,
    wal_of,
)

__all__ = ["SCHEMA", "SCHEMA_VERSION", "UPGRADES", "JournalError", "connect_reader", "connect_sync",
           "connect_writer", "read_only_uri", "refuse_foreign_database"]

SCHEMA_VERSION = "10"
"""3: units carry the task's family and the repetition index (evidence, repeats). 4: model calls carry
`usage_estimated` (the provider sent no usage; the tokens are estimated from bytes).
5: state audits per episode (`episode_audits`), audit replays (`audits`, `audit_cases`).
6: model calls carry `replica` (which base URL of an endpoint pool answered; empty for one endpoint).
7: model calls carry `cache_write_1h_tokens` (Anthropic's 1-hour cache writes, billed apart from
5-minute ones) and `cache_ttl` (the TTL the request asked for: '5m', '1h', '' for none).
8: units carry `replica`, the stream replica of `--replicas K` (0 for every unit journaled before; not
the endpoint replica of `model_calls.replica`, which names a base URL of an endpoint pool).
9: model calls carry `retried` (the failure class of each failed attempt, so retries and timeouts
show per stream in reports and `runs`).
10: model calls carry `route` ('live', or 'batch' for a call answered through a provider's batch API);
`provider_batches` and `batch_items` record every batch as it is submitted, so a resumed run polls
the batch it already paid for instead of submitting its requests again."""

_RETRIED = "ALTER TABLE model_calls ADD COLUMN retried TEXT NOT NULL DEFAULT ''"
_ROUTE = "ALTER TABLE model_calls ADD COLUMN route TEXT NOT NULL DEFAULT 'live'"
UPGRADES: dict[str, tuple[str, ...]] = {
    "7": ("ALTER TABLE units ADD COLUMN replica INTEGER NOT NULL DEFAULT 0", _RETRIED, _ROUTE),
    "8": (_RETRIED, _ROUTE),
    "9": (_ROUTE,),
}
"""Version -> the statements that bring it to SCHEMA_VERSION, in one transaction. The batch tables are
new, so `SCHEMA`'s CREATE ... IF NOT EXISTS adds them to an older journal (as it adds `budget_holds`)."""

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
    family TEXT NOT NULL DEFAULT '', repetition INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
    replica INTEGER NOT NULL DEFAULT 0,
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
    cost_usd REAL NOT NULL, latency_s REAL NOT NULL, created_at REAL NOT NULL, error TEXT NOT NULL DEFAULT '',
    usage_estimated INTEGER NOT NULL DEFAULT 0, replica TEXT NOT NULL DEFAULT '',
    cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0, cache_ttl TEXT NOT NULL DEFAULT '',
    retried TEXT NOT NULL DEFAULT '', route TEXT NOT NULL DEFAULT 'live'
);
CREATE INDEX IF NOT EXISTS calls_by_run ON model_calls (run_id, purpose);
-- Per-episode call sums (show, export, estimate) look calls up by unit; without it each episode reads the
-- run's every call, and those commands grow with the square of the run.
CREATE INDEX IF NOT EXISTS calls_by_unit ON model_calls (run_id, unit_id);
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
CREATE TABLE IF NOT EXISTS episode_audits (
    run_id TEXT NOT NULL, unit_id TEXT NOT NULL, stream_id TEXT NOT NULL,
    state_match INTEGER, state_unchanged INTEGER,
    writes_proposed INTEGER NOT NULL, writes_executed INTEGER NOT NULL, writes_changing INTEGER NOT NULL,
    escalated INTEGER NOT NULL, details BLOB NOT NULL,
    PRIMARY KEY (run_id, unit_id)
);
CREATE TABLE IF NOT EXISTS audits (
    audit_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, kind TEXT NOT NULL, spec TEXT NOT NULL,
    code_version TEXT NOT NULL, created_at REAL NOT NULL, status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_cases (
    audit_id TEXT NOT NULL, case_id TEXT NOT NULL, verdict TEXT NOT NULL, details BLOB NOT NULL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (audit_id, case_id)
);
-- A provider batch, recorded under its label before it is created ('submitting', batch_id '') and again
-- with the provider's id once created ('submitted'), then 'ended' (results readable), 'collected' (every
-- result journaled in batch_items) or 'cancelled'. `endpoint` is the base URL, never a key.
CREATE TABLE IF NOT EXISTS provider_batches (
    run_id TEXT NOT NULL, label TEXT NOT NULL, api TEXT NOT NULL, endpoint TEXT NOT NULL,
    model TEXT NOT NULL, batch_id TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,
    items INTEGER NOT NULL, round INTEGER NOT NULL, resubmission INTEGER NOT NULL DEFAULT 0,
    submitted_at REAL NOT NULL, ended_at REAL, provider_status TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, label)
);
-- One request of a batch (custom_id = the request hash): 'pending' until its result is journaled
-- ('succeeded' with the encoded answer, 'errored', 'expired', 'canceled'), before any episode uses it.
CREATE TABLE IF NOT EXISTS batch_items (
    run_id TEXT NOT NULL, label TEXT NOT NULL, custom_id TEXT NOT NULL, unit_id TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', answer BLOB, error TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, label, custom_id)
);
CREATE INDEX IF NOT EXISTS batch_items_by_request ON batch_items (run_id, custom_id);
-- A priced call's reservation under a cap, committed before the call is sent (request_hash: the call
-- row's key). A process killed with the call in flight leaves it 'open' with no call row to settle it:
-- the next process of the run marks it 'lost' (the provider may have billed it) and counts it as spent.
CREATE TABLE IF NOT EXISTS budget_holds (
    run_id TEXT NOT NULL, hold_id TEXT NOT NULL, request_hash TEXT NOT NULL, amount_usd REAL NOT NULL,
    created_at REAL NOT NULL, status TEXT NOT NULL DEFAULT 'open',
    PRIMARY KEY (run_id, hold_id)
);
"""

_PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=10000")
_VERSION_SQL = "SELECT value FROM meta WHERE key = 'schema_version'"


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


def _refuse_version(path: Path, found: str | None) -> None:
    if found != SCHEMA_VERSION:
        raise JournalError(f"{path}: journal schema version {found or 'none'}, this shiftbench reads "
                           f"{SCHEMA_VERSION}; use a shiftbench of the version that wrote it")


_TABLES = frozenset(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SCHEMA)) | {"sqlite_sequence"}


def _refuse_foreign(path: Path, connection: sqlite3.Connection) -> None:
    """Another program's SQLite database named by mistake gets no tables of ours added. A journal whose
    first creation was cut short (some of our tables, no version yet) is completed instead."""
    tables = {str(row[0]) for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    foreign = sorted(tables - _TABLES)
    if foreign and not ("meta" in tables and connection.execute(_VERSION_SQL).fetchone()):
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise JournalError(f"{path}: an SQLite database that is not a shiftbench journal (tables: {shown}); "
                           "pass --journal a new path to start one, or the journal your run printed")


def refuse_foreign_database(path: Path) -> None:
    """Before any work starts: an existing SQLite file named as the journal must be a journal (or one whose
    creation was cut short). Read-only, so the check itself writes nothing."""
    uri, query_only = read_uri(path)
    had_wal = wal_of(path).exists()
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise cannot_open(path, exc, had_wal) from exc
    try:
        if query_only:
            connection.execute("PRAGMA query_only=ON")
        _refuse_foreign(path, connection)
    except sqlite3.DatabaseError as exc:
        raise _unusable(path, exc, had_wal) from exc
    finally:
        connection.close()


def _unusable(path: Path, exc: sqlite3.DatabaseError, had_wal: bool) -> JournalError:
    if disk_full(exc, path):
        return JournalFull(path, exc)
    if is_damage(exc) and _has_sqlite_header(path):
        return damaged(path, exc, had_wal)
    if getattr(exc, "sqlite_errorname", "") == "SQLITE_CANTOPEN":  # SQLite opens lazily: met at the first read
        return cannot_open(path, exc, had_wal)
    return JournalError(f"{path}: not a shiftbench journal ({exc}); pass --journal PATH to a journal file, or a "
                        f"new path to start one; {recover_hint(path)}")


def _has_sqlite_header(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def connect_writer(path: Path, create: bool) -> sqlite3.Connection:
    """The writer's connection (blocking; call it from a worker thread): WAL, the schema created if
    missing, the version checked. Used by one thread at a time: the writer's. A journal this call
    created and could not complete (a full disk) is removed: a run that cannot start leaves nothing."""
    new = not path.exists()
    if not new:
        refuse_read_only_journal(path)  # before _prepare, which would try to chmod it
    _prepare(path, create)
    had_wal = wal_of(path).exists()
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        _refuse_foreign(path, connection)
        for pragma in _PRAGMAS:
            connection.execute(pragma)
        # One transaction: a new journal's tables cost its WAL one frame per page, not one copy of the
        # schema page per statement (218 KB of WAL before the first row, which a nearly full disk lacked).
        # IMMEDIATE: of two processes creating one journal, the second waits (busy_timeout) for the first.
        connection.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nINSERT OR IGNORE INTO meta (key, value) "
                                 f"VALUES ('schema_version', '{int(SCHEMA_VERSION)}');\nCOMMIT;")
        row = connection.execute(_VERSION_SQL).fetchone()
        found = None if row is None else str(row[0])
        if found in UPGRADES:
            found = _upgrade(connection, found)
        _refuse_version(path, found)
    except sqlite3.DatabaseError as exc:
        _close_failed(connection, path, new)
        raise _unusable(path, exc, had_wal) from exc
    except BaseException:
        _close_failed(connection, path, new)
        raise
    return connection


def _close_failed(connection: sqlite3.Connection, path: Path, new: bool) -> None:
    connection.close()
    if new:
        for made in (path, wal_of(path), path.with_name(path.name + "-shm"), path.with_name(path.name + "-journal")):
            made.unlink(missing_ok=True)


def _upgrade(connection: sqlite3.Connection, found: str) -> str:
    """Bring a journal of version `found` to SCHEMA_VERSION in one transaction (IMMEDIATE: two processes
    opening it at once upgrade it once); returns the version it now has."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        row = connection.execute(_VERSION_SQL).fetchone()
        if row is not None and str(row[0]) == found:  # else another process upgraded it meanwhile
            for statement in UPGRADES[found]:
                connection.execute(statement)
            connection.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION


def _upgrade_file(path: Path, found: str) -> None:
    """A reader found an older journal: upgrade it through a short writer connection, or say what to do
    when the file cannot be written (a read-only copy)."""
    try:
        connect_writer(path, create=False).close()
    except JournalError as exc:
        cause = exc.__cause__ or exc
        raise JournalError(f"{path}: journal schema version {found} needs a one-time upgrade to {SCHEMA_VERSION} "
                           f"that failed ({cause}); open it once where it is writable") from exc


async def connect_reader(path: Path) -> aiosqlite.Connection:
    """A connection that only reads (`media.read_uri`: it leaves no file beside the journal and works on
    read-only media): under WAL it reads the last committed state beside the writer, never blocks it,
    and never sees a transaction the writer has not committed. An older journal is upgraded first (see
    UPGRADES)."""
    _prepare(path, create=False)
    had_wal = wal_of(path).exists()
    connection = await _connect_read_only(path, had_wal)
    found = await _reader_version(path, connection, had_wal)
    if found in UPGRADES:
        await connection.close()
        await anyio.to_thread.run_sync(_upgrade_file, path, found)
        connection = await _connect_read_only(path, had_wal)
        found = await _reader_version(path, connection, had_wal)
    try:
        _refuse_version(path, found)
    except BaseException:
        await connection.close()
        raise
    return connection


async def _connect_read_only(path: Path, had_wal: bool) -> aiosqlite.Connection:
    uri, query_only = read_uri(path)
    try:
        connection = await aiosqlite.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise cannot_open(path, exc, had_wal) from exc
    try:
        await connection.execute("PRAGMA busy_timeout=10000")
        if query_only:
            await connection.execute("PRAGMA query_only=ON")
    except BaseException:
        await connection.close()
        raise
    return connection


async def _reader_version(path: Path, connection: aiosqlite.Connection, had_wal: bool) -> str | None:
    try:
        rows = await connection.execute_fetchall(_VERSION_SQL)
    except sqlite3.DatabaseError as exc:
        await connection.close()
        raise _unusable(path, exc, had_wal) from exc
    return next((str(row[0]) for row in rows), None)


def connect_sync(path: Path) -> sqlite3.Connection:
    """A plain synchronous connection with the journal's pragmas and schema: the floor a benchmark
    compares the journal's writer with. Not for the runner: it bypasses the one writer."""
    return connect_writer(path, create=True)


async def vacuum(path: Path) -> None:
    """Give the pages of deleted rows back to the disk: fold the WAL into the file, then rebuild it.
    Needs the journal to itself (the caller refuses while a run writes to it) and free disk space about
    the size of the journal while it runs."""
    await anyio.to_thread.run_sync(_vacuum, path)


def _vacuum(path: Path) -> None:
    connection = connect_writer(path, create=False)
    try:
        # Each statement read to its end: a pragma's unread result row keeps a statement open, and
        # SQLite refuses VACUUM while one is.
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        connection.execute("VACUUM").fetchall()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError as exc:
        raise JournalError(f"{path}: cannot vacuum now ({exc}); retry when no run or report is using it") from exc
    finally:
        connection.close()

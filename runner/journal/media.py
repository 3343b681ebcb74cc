"""A journal where it lies: on read-only media, without write permission, or damaged.

Reading commands open a journal so that they work wherever it is and leave nothing beside it. SQLite
in WAL mode makes `-wal` and `-shm` files next to the journal for every connection, and a read-only
connection cannot remove them when it closes; so:

- where we may write the journal, a reader opens it read-write with `query_only` on: it cannot
  change a row, and as the last connection to close it removes the `-wal` and `-shm` it made
  (a run's writer beside it keeps them until the run closes);
- where we may not (read-only media, no permission) and no `-wal` is there, nothing can be writing
  it: it is opened `immutable` (no lock, no side file); with a `-wal` there, read-only (the `-wal`
  may hold the last commits, which `immutable` would not see).

Writing commands on such a location are refused up front, saying it is read-only, not damaged. A
damaged journal (SQLite's CORRUPT / NOTADB) ends with one line saying what to try.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from runner.common.files import DiskFull, location_problem
from simulators.errors import ShiftbenchInputError

__all__ = ["DAMAGE", "JournalError", "JournalFull", "cannot_open", "damaged", "is_damage", "no_side_files_left",
           "read_only_uri", "recover_hint", "read_uri", "refuse_read_only_journal", "told", "wal_of", "writable"]

DAMAGE = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
"""SQLite's names for a file whose pages cannot be read as a database."""


class JournalError(ShiftbenchInputError):
    """The journal file cannot be used (unreadable, not a journal, newer schema, damaged)."""


class JournalFull(JournalError, DiskFull):
    """The disk holding the journal has no room for a commit. The commit was rolled back whole (SQLite's
    promise), so the journal holds every transaction before it and resumes from there."""

    def __init__(self, path: Path, error: OSError | sqlite3.Error) -> None:
        DiskFull.__init__(self, f"{path}: the disk holding the journal is full ({error})", error)
        self.path = path


def wal_of(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def writable(path: Path) -> bool:
    """We may write the journal and make its side files: its folder and the file itself."""
    return location_problem(path.parent) is None and os.access(path, os.W_OK)


def read_uri(path: Path) -> tuple[str, bool]:
    """The URI a reading command opens `path` with, and whether `query_only` must be set on it."""
    uri = path.resolve().as_uri()  # as_uri() escapes what a URI would misread in a path ('?', '#', '%')
    if writable(path):
        return f"{uri}?mode=rw", True
    if not wal_of(path).exists():
        return f"{uri}?mode=ro&immutable=1", False
    return f"{uri}?mode=ro", False


def read_only_uri(path: Path) -> str:
    """A URI that can only read (`journal merge` attaches its sources with it): read-only, or immutable on
    a location nothing can write to and with no `-wal` (as `read_uri` decides)."""
    uri, _ = read_uri(path)
    return uri.replace("?mode=rw", "?mode=ro")


@contextmanager
def no_side_files_left(paths: Iterable[Path]) -> Iterator[None]:
    """For readers that must attach with `read_only_uri` (`journal merge`, whose connection also writes):
    afterwards, each journal that had no `-wal` before is opened once more the `read_uri` way and closed,
    which, as its last connection, removes the `-wal` and `-shm` the attach made (a journal another
    process holds open keeps them, as it should)."""
    untouched = [Path(path) for path in paths if not wal_of(Path(path)).exists()]
    try:
        yield
    finally:
        for path in untouched:
            if path.is_file() and writable(path):
                uri, _ = read_uri(path)
                try:
                    connection = sqlite3.connect(uri, uri=True)
                    try:
                        connection.execute("PRAGMA query_only=ON")
                        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
                    finally:
                        connection.close()
                except sqlite3.Error:
                    pass  # best effort: what is left is SQLite's own, harmless


def refuse_read_only_journal(path: Path, flag: str = "--journal") -> None:
    """A command that writes to a journal (a run, resume, `runs rm`, vacuum, an audit) says when the
    journal's location is read-only, which no repair of the journal helps (reading commands still open it)."""
    problem = location_problem(path.parent)
    if problem is None and not os.access(path, os.R_OK | os.W_OK):
        problem = f"{path} is not readable and writable (permissions)"
    if problem is not None:
        raise JournalError(f"{flag} {path}: {problem}, and this command writes to the journal; the journal is "
                           "not damaged: read it where it is (runs, show, report ...), or copy it (with its -wal "
                           "file, if any) to a writable folder to write to it")


def is_damage(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorname", "") in DAMAGE


def damaged(path: Path, exc: sqlite3.Error, had_wal: bool | None = None) -> JournalError:
    """The one line for a journal SQLite cannot read: what happened and what to try, nothing changed.
    `had_wal`: whether a `-wal` was beside it before this process opened it (None: look now)."""
    wal = wal_of(path).name
    if wal_of(path).exists() if had_wal is None else had_wal:
        wal_hint = f"keep {wal} beside it (it may hold the last commits; copy or move the two together)"
    else:
        wal_hint = f"if the journal was copied or moved without its {wal} file, put that file back beside it"
    return JournalError(f"{path}: the journal is damaged ({exc}); nothing was changed. To try: {wal_hint}; or copy "
                        f"out what is readable with `sqlite3 {path} .recover | sqlite3 recovered.sqlite` (`.dump` "
                        "where that sqlite3 has no .recover) and pass --journal recovered.sqlite")


def recover_hint(path: Path) -> str:
    """For a file that is not a database at all: a journal whose first page was damaged reads the same,
    and `.recover` may still copy out its other pages."""
    return (f"if it was a journal whose first bytes were damaged, `sqlite3 {path} .recover | sqlite3 "
            "recovered.sqlite` may still copy out what is readable")


def told(path: Path, error: BaseException, had_wal: bool) -> BaseException:
    """`error` as the user should meet it: damage found by a query or a commit becomes `damaged`'s line."""
    if isinstance(error, sqlite3.Error) and is_damage(error):
        return damaged(path, error, had_wal)
    return error


def cannot_open(path: Path, exc: sqlite3.Error, had_wal: bool) -> JournalError:
    """A journal SQLite cannot open for reading at all (damage is told apart by `damaged`)."""
    if is_damage(exc):
        return damaged(path, exc, had_wal)
    if not writable(path) and wal_of(path).exists():
        return JournalError(f"{path}: cannot be read where it is ({exc}): it is read-only and has an unfinished "
                            f"write-ahead log ({wal_of(path).name}); copy the journal with its -wal and -shm "
                            "files to a writable folder and read it there")
    return JournalError(f"{path}: cannot be opened ({exc})")

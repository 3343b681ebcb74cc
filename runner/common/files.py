"""Writing a user's output whole or not at all, and only where an output may go.

An output file is a regular file (replaced whole, in one rename) or an absent path (created, with any
folders it needs); a folder, a device, a FIFO, a socket, or a link to one, named as an output file is
refused with one line before anything is written, and nothing but a regular file is ever replaced,
whoever runs it (root too: these checks do not lean on permissions). An output folder is a new path
or an existing folder. A write that fails midway (a full disk, media gone read-only, a folder put
where the file goes) ends as one line and leaves nothing behind: not the temporary file, not the
files staged for a folder, not the folders made for them.

    write_atomically(path, text, "--html")               # a whole text
    with replacing(path, "--out") as temporary:          # any writer (SQLite: `journal merge`) fills
        build(temporary)                                 # `temporary`, beside `path`; renamed on success
    with output_folder(out, "--out") as folder:          # export: files staged in `out`, moved in place
        write(folder.file("run.jsonl"))                  # at the end, all or none
    with folders_for(root, "--out"):                     # a writer of its own (the dataset's staging):
        build_suite(root)                                # folders made for it go if it fails
    with creating(out, "journal merge") as temporary:    # a new file only: linked into place, so not even
        write_journal(temporary)                         # a file that appeared meanwhile is replaced

A full disk is told apart (`disk_full`: ENOSPC, a quota, SQLite's SQLITE_FULL) from other failures.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from simulators.errors import ShiftbenchInputError

__all__ = ["DiskFull", "FolderOutput", "creating", "disk_full", "folders_for", "location_problem", "nearest_existing",
           "output_file", "output_folder", "replacing", "shared_mode", "write_atomically", "write_failure"]

_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_NEARLY_FULL = 1 << 20
"""Free bytes under which an SQLite I/O error is taken for a full disk (its pages are 4 KiB, its -shm 32)."""


class DiskFull(ShiftbenchInputError):
    """A write found no room (the journal's `JournalFull` is one); `error` is what the OS or SQLite said.
    An output being written turns it into its own one line (`write_failure`)."""

    def __init__(self, message: str, error: OSError | sqlite3.Error) -> None:
        super().__init__(message)
        self.error = error


def write_atomically(path: Path, text: str, flag: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`. `flag` names the
    option the path came from, for the one-line error."""
    with replacing(path, flag) as temporary:
        temporary.write_text(text, encoding="utf-8")


@contextmanager
def replacing(path: Path, flag: str) -> Iterator[Path]:
    """A temporary file beside `path` for the caller to fill; renamed over `path` when the block ends
    well, removed (with the folders made for it) when it raises."""
    target = output_file(Path(path), flag)
    with folders_for(target, flag):
        try:
            handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            os.close(handle)
        except OSError as exc:
            raise write_failure(flag, Path(path), exc) from exc
        temporary = Path(name)
        try:
            yield temporary
            os.chmod(temporary, shared_mode())  # mkstemp makes it private; an output is meant to be shared
            _refuse_unless_replaceable(target, flag)  # again: something may have been put there meanwhile
            os.replace(temporary, target)
        except DiskFull as full:
            raise write_failure(flag, Path(path), full.error) from full
        except (OSError, sqlite3.Error) as exc:
            if not (isinstance(exc, OSError) or disk_full(exc, target)):
                raise
            raise write_failure(flag, Path(path), exc) from exc
        finally:
            temporary.unlink(missing_ok=True)


@contextmanager
def creating(path: Path, flag: str) -> Iterator[Path]:
    """A temporary file beside `path` for the caller to fill (an SQLite database too: its -wal, -shm and
    -journal go with it), hard-linked into place when the block ends well, so nothing is ever replaced;
    `path` must not exist. On a file system without hard links, a rename after a last look. The file
    keeps the mode the caller gave it (mkstemp's is private, as a journal's should be)."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        raise ShiftbenchInputError(f"{flag} {path}: exists; nothing was written: name a path that does not exist yet")
    _refuse_unwritable_folder(path.absolute().parent, flag, path)
    with folders_for(path, flag):
        try:
            handle, name = tempfile.mkstemp(dir=path.absolute().parent, prefix=f".{path.name}.", suffix=".tmp")
            os.close(handle)
        except OSError as exc:
            raise write_failure(flag, path, exc) from exc
        temporary = Path(name)
        try:
            yield temporary
            _link_into_place(temporary, path, flag)
        except DiskFull as full:
            raise write_failure(flag, Path(path), full.error) from full
        except (OSError, sqlite3.Error) as exc:
            if not (isinstance(exc, OSError) or disk_full(exc, path)):
                raise
            raise write_failure(flag, path, exc) from exc
        finally:
            for leftover in (temporary, *(Path(f"{temporary}{side}") for side in ("-wal", "-shm", "-journal"))):
                leftover.unlink(missing_ok=True)


def _link_into_place(temporary: Path, path: Path, flag: str) -> None:
    try:
        os.link(temporary, path)
        return
    except FileExistsError:
        raise ShiftbenchInputError(f"{flag} {path}: appeared while writing; nothing was written there: write "
                                   "again to a new path") from None
    except OSError:
        pass  # no hard links here
    if path.exists() or path.is_symlink():
        raise ShiftbenchInputError(f"{flag} {path}: appeared while writing; nothing was written there")
    os.rename(temporary, path)


def output_file(path: Path, flag: str) -> Path:
    """The file to write for `path`: itself, or the regular file a link points at (the link stays)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            raise ShiftbenchInputError(f"{flag} {path}: is a link to nothing ({os.readlink(path)}); nothing was "
                                       "written: give a file path") from None
        _refuse_unwritable_folder(path.parent, flag, path)
        return path
    except OSError as exc:
        raise ShiftbenchInputError(f"{flag} {path}: cannot be reached ({exc.strerror}); nothing was written: give a "
                                   "file path") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ShiftbenchInputError(_not_a_file(path, info.st_mode, flag))
    target = Path(os.path.realpath(path))
    _refuse_unwritable_folder(target.parent, flag, path)
    return target


class FolderOutput:
    """Files of one output folder, staged in a hidden folder inside it until all are written."""

    def __init__(self, folder: Path, staging: Path, flag: str) -> None:
        self.folder = folder
        self._staging = staging
        self._flag = flag
        self._names: list[str] = []

    def file(self, name: str) -> Path:
        """Where to write the file `name` of the folder (checked now: only a regular file is replaced)."""
        _refuse_unless_replaceable(self.folder / name, self._flag)
        self._names.append(name)
        return self._staging / name

    def publish(self) -> None:
        for name in self._names:  # every target checked before the first is moved: all or none
            _refuse_unless_replaceable(self.folder / name, self._flag)
        for name in self._names:
            os.replace(self._staging / name, self.folder / name)


@contextmanager
def output_folder(path: Path, flag: str) -> Iterator[FolderOutput]:
    """An output folder (new, with its parents, or existing) whose files appear only when all are written;
    a failure leaves the folder as it was (a folder made for the output is removed)."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            raise ShiftbenchInputError(_not_a_folder(path, flag))
        _refuse_unwritable_folder(path, flag, path)
    with folders_for(path / "_", flag):
        try:
            staging = Path(tempfile.mkdtemp(prefix=".shiftbench-staging.", dir=path))
        except OSError as exc:
            raise write_failure(flag, path, exc) from exc
        try:
            output = FolderOutput(path, staging, flag)
            yield output
            output.publish()
        except OSError as exc:
            raise write_failure(flag, path, exc) from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def folders_for(path: Path, flag: str) -> Iterator[None]:
    """Make the missing folders above `path`; remove the ones made here if the block raises."""
    made: list[Path] = []
    folder = Path(path).absolute().parent
    while not folder.exists() and folder != folder.parent:
        made.append(folder)
        folder = folder.parent
    try:
        try:
            for new in reversed(made):
                new.mkdir()
        except OSError as exc:
            raise write_failure(flag, Path(path).parent, exc) from exc
        yield
    except BaseException:  # a Ctrl-C between two mkdirs too: nothing made here is left behind
        _remove_empty(made)
        raise


def write_failure(flag: str, path: Path, exc: OSError | sqlite3.Error) -> ShiftbenchInputError:
    """The one line for a write that failed (the caller has removed what it wrote)."""
    said = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
    if disk_full(exc, path):
        return ShiftbenchInputError(f"{flag} {path}: the disk is full ({said}); nothing was written: free some space "
                                    "or choose another folder")
    problem = location_problem(path if path.is_dir() else path.parent)
    reason = problem or f"cannot write there ({said})"
    return ShiftbenchInputError(f"{flag} {path}: {reason}; nothing was written: choose a writable folder")


def disk_full(exc: BaseException, where: Path | None = None) -> bool:
    """An error that says the disk (or the user's quota) has no room left: the OS's ENOSPC, SQLite's
    SQLITE_FULL, or an SQLite I/O error (what SQLite says when growing its -shm or -wal fails) while the
    file system of `where` has next to no room left."""
    if isinstance(exc, sqlite3.Error):
        name = str(getattr(exc, "sqlite_errorname", ""))
        return name == "SQLITE_FULL" or (name.startswith("SQLITE_IOERR") and where is not None
                                         and _free_bytes(where) < _NEARLY_FULL)
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL


def _free_bytes(where: Path) -> int:
    try:
        info = os.statvfs(nearest_existing(Path(where).absolute().parent))
    except OSError:
        return _NEARLY_FULL
    return info.f_bavail * info.f_frsize


def location_problem(folder: Path) -> str | None:
    """Why nothing can be written in `folder` (read-only media, permissions), or None. Read-only media
    is told apart, since changing permissions does not help there (and root is stopped by it too)."""
    folder = nearest_existing(folder)
    if not folder.is_dir():
        return f"{folder} is not a folder"
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"{folder} is on read-only media"
    except OSError:
        pass
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable (permissions)"
    return None


def shared_mode() -> int:
    """The mode a plain `open` would give a new file under the user's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _refuse_unwritable_folder(folder: Path, flag: str, path: Path) -> None:
    problem = location_problem(folder)
    if problem is not None:
        raise ShiftbenchInputError(f"{flag} {path}: {problem}; nothing was written: choose a writable folder")


def _refuse_unless_replaceable(path: Path, flag: str) -> None:
    """Only an absent path or a regular file (not a link: the rename would replace the link) may be
    renamed onto."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise ShiftbenchInputError(_not_a_file(path, info.st_mode, flag))


def _not_a_file(path: Path, mode: int, flag: str) -> str:
    if stat.S_ISDIR(mode):
        return f"{flag} {path}: is a folder, not a file; nothing was written: give a file path such as {path}/NAME"
    return (f"{flag} {path}: is {_kind(mode)}, not a regular file; nothing was written: give a new path or a "
            "regular file (only a regular file is ever replaced)")


def _not_a_folder(path: Path, flag: str) -> str:
    try:
        kind = _kind(os.stat(path).st_mode)
    except OSError:
        kind = "a link to nothing"
    return f"{flag} {path}: is {kind}, not a folder; nothing was written: give a new path or a folder"


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:  # innermost first
        try:
            folder.rmdir()
        except OSError:
            return


def nearest_existing(path: Path) -> Path:
    """`path` or its closest ancestor that exists."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path

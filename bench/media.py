"""Real bad media, made where they are used (as root: chmod does not stop root, so a read-only location is
a read-only bind mount; a full disk is a small tmpfs; a device is a node of our own, never the machine's
/dev/null, which an output check that regressed would replace).

Each helper raises `Unavailable`, saying why, where the machine does not allow it (no mount permission,
no mknod): tests/media.py turns that into a skip, `bench.edge_table` into a row that says so.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["FULL_DEVICE", "NULL_DEVICE", "Unavailable", "device", "fifo", "fill", "hazards", "read_only_view",
           "small_disk", "snapshot", "unix_socket"]

NULL_DEVICE = (1, 3)
FULL_DEVICE = (1, 7)
"""Linux's character devices: writes vanish (null), or fail with ENOSPC (full)."""


class Unavailable(Exception):
    """This machine does not let us make that medium (mount or mknod refused)."""


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Unavailable(f"mount {' '.join(args)} is not permitted here ({done.stderr.strip() or done.returncode})")


def _unmount(target: Path) -> None:
    done = subprocess.run(["umount", str(target)], capture_output=True, text=True, check=False)
    if done.returncode != 0:  # a file still open there (a failing command's connection): detach it anyway
        subprocess.run(["umount", "--lazy", str(target)], capture_output=True, check=True)


@contextmanager
def read_only_view(folder: Path) -> Iterator[Path]:
    """`folder` seen through a read-only bind mount (EROFS for every writer, root included)."""
    view = folder.with_name(folder.name + "-ro")
    view.mkdir()
    try:
        _mount("--bind", str(folder), str(view))
    except Unavailable:
        view.rmdir()
        raise
    try:
        _mount("-o", "remount,bind,ro", str(view))
        yield view
    finally:
        _unmount(view)
        view.rmdir()


@contextmanager
def small_disk(where: Path, kilobytes: int) -> Iterator[Path]:
    """A tmpfs of `kilobytes` mounted at `where` (made here): a disk that really fills."""
    where.mkdir()
    try:
        _mount("-t", "tmpfs", "-o", f"size={kilobytes}k,mode=0755", "tmpfs", str(where))
    except Unavailable:
        where.rmdir()
        raise
    try:
        yield where
    finally:
        _unmount(where)
        where.rmdir()


def fill(disk: Path, leave_bytes: int) -> Path:
    """A filler file that leaves about `leave_bytes` free on `disk`; remove it to free the disk again."""
    filler = disk / "filler"
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with filler.open("wb") as handle:
        handle.write(b"\0" * max(0, free - leave_bytes))
    return filler


def device(path: Path, numbers: tuple[int, int]) -> Path:
    """A character device node at `path` (a copy of /dev/null or /dev/full, not the machine's own)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(*numbers))
    except PermissionError as exc:
        raise Unavailable(f"mknod is not permitted here ({exc.strerror})") from exc
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@contextmanager
def unix_socket(path: Path) -> Iterator[Path]:
    """A listening Unix socket bound at `path` (a socket file on disk)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = Path.cwd()
    try:
        os.chdir(path.parent)  # a socket's address is short (108 bytes); a temporary folder's may be longer
        server.bind(path.name)
        server.listen(1)
        os.chdir(here)
        yield path
    finally:
        os.chdir(here)
        server.close()


def snapshot(root: Path) -> dict[str, tuple[int, int, bytes | None]]:
    """Every path under `root` (links not followed): its mode, its device number, and a regular file's
    bytes; what 'nothing on disk changed' is checked against."""
    found: dict[str, tuple[int, int, bytes | None]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        found[str(path.relative_to(root))] = (info.st_mode, info.st_rdev,
                                              path.read_bytes() if stat.S_ISREG(info.st_mode) else None)
    return found


@contextmanager
def hazards(folder: Path) -> Iterator[dict[str, Path]]:
    """Every kind of path an output file must never replace, side by side in `folder`, keyed by the words
    the refusal uses (a trailing space keeps two of one kind apart)."""
    inside = folder / "a-folder"
    inside.mkdir()
    (inside / "thesis.tex").write_text("years of work")
    with unix_socket(folder / "sock") as sock:
        yield {"is a folder": inside, "is a device": device(folder / "null", NULL_DEVICE),
               "is a device ": device(folder / "full", FULL_DEVICE), "is a FIFO (named pipe)": fifo(folder / "pipe"),
               "is a socket": sock}

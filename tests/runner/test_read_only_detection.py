"""The check that decides a location is read-only (runner/common/files.location_problem, and the journal's
`writable` / `refuse_read_only_journal`) against what a writer really meets on the real filesystem: for
each medium, the verdict and an actual attempt to create (or open for writing) a file there must agree.

- a read-only bind mount: read-only media for everyone, root included (EROFS);
- a folder without write permission: not writable for a user who is not root (EACCES), writable for root,
  whom the mode does not stop;
- a file without write permission in a writable folder: not writable for that user, writable for root.
The non-root user is `nobody`, the check run in a child process that drops to it (setpriv), so the
verdict is the one that user's own shiftbench would reach."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from runner.common.files import location_problem
from runner.journal.media import refuse_read_only_journal, writable
from simulators.errors import ShiftbenchInputError
from tests.media import read_only_view

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534

# Run as the other user: the verdicts of the three checks and what creating / opening for writing met.
PROBE = """
import json, os, sys
from pathlib import Path
from runner.common.files import location_problem
from runner.journal.media import refuse_read_only_journal, writable
folder, journal = Path(sys.argv[1]), Path(sys.argv[2])
try:
    refuse_read_only_journal(journal)
    refusal = None
except Exception as exc:
    refusal = str(exc)
def attempt(path, flags):
    try:
        os.close(os.open(path, flags, 0o644))
        return "ok"
    except OSError as exc:
        return os.strerror(exc.errno)
print(json.dumps({"problem": location_problem(folder), "writable": writable(journal), "refusal": refusal,
                  "create": attempt(folder / "probe.new", os.O_WRONLY | os.O_CREAT | os.O_EXCL),
                  "open": attempt(journal, os.O_WRONLY)}))
"""


def as_user(uid: int, folder: Path, journal: Path) -> dict[str, object]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to check as a user who is not root")
    hidden = _closed_to_others(ROOT / "runner" / "__init__.py")
    if hidden is not None:  # a checkout in a 0700 folder (mktemp -d): the user would not even import runner
        pytest.skip(f"user {uid} cannot read the checkout: {hidden} is closed to other users")
    done = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-c",
                           PROBE, str(folder), str(journal)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    if done.returncode != 0 and "Permission denied" in done.stderr and "probe" not in done.stderr:
        pytest.skip(f"user {uid} cannot read the checkout: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = orjson.loads(done.stdout)
    return found


def _closed_to_others(path: Path) -> Path | None:
    """The first of `path`'s folders another user cannot enter, or `path` itself if they cannot read it."""
    for folder in reversed(path.parents):
        if not folder.stat().st_mode & 0o001:
            return folder
    return None if path.stat().st_mode & 0o004 else path


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder another user can reach (pytest's own tmp folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="shiftbench-ro-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in folder.rglob("*"):
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(folder)


def test_a_folder_without_write_permission_is_not_writable_for_a_user_and_is_for_root(shared: Path) -> None:
    folder = shared / "locked"
    folder.mkdir()
    (folder / "journal.sqlite").write_bytes(b"")
    (folder / "journal.sqlite").chmod(0o666)
    folder.chmod(0o555)
    seen = as_user(NOBODY, folder, folder / "journal.sqlite")
    assert seen["create"] == "Permission denied"
    assert seen["problem"] == f"{folder} is not writable (permissions)"
    assert seen["writable"] is False and "is not writable (permissions)" in str(seen["refusal"])
    # Root meets no refusal there, and the check says so.
    assert location_problem(folder) is None and writable(folder / "journal.sqlite")
    os.close(os.open(folder / "root.new", os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    refuse_read_only_journal(folder / "journal.sqlite")


def test_a_file_without_write_permission_is_not_writable_for_a_user_and_is_for_root(shared: Path) -> None:
    folder = shared / "open"
    folder.mkdir()
    folder.chmod(0o777)
    journal = folder / "journal.sqlite"
    journal.write_bytes(b"")
    journal.chmod(0o444)
    seen = as_user(NOBODY, folder, journal)
    assert seen["open"] == "Permission denied" and seen["create"] == "ok"
    assert seen["problem"] is None and seen["writable"] is False
    assert f"{journal} is not readable and writable (permissions)" in str(seen["refusal"])
    os.close(os.open(journal, os.O_WRONLY))
    assert writable(journal)
    refuse_read_only_journal(journal)


def test_a_writable_folder_and_file_are_writable_for_a_user(shared: Path) -> None:
    """The other side of the two above: the check does not refuse what the user can write."""
    folder = shared / "mine"
    folder.mkdir()
    folder.chmod(0o777)
    (folder / "journal.sqlite").write_bytes(b"")
    (folder / "journal.sqlite").chmod(0o666)
    seen = as_user(NOBODY, folder, folder / "journal.sqlite")
    assert seen == {"problem": None, "writable": True, "refusal": None, "create": "ok", "open": "ok"}


def test_a_read_only_bind_mount_is_read_only_media_for_root_and_for_a_user(shared: Path) -> None:
    folder = shared / "share"
    folder.mkdir()
    folder.chmod(0o777)
    (folder / "journal.sqlite").write_bytes(b"")
    (folder / "journal.sqlite").chmod(0o666)
    with read_only_view(folder) as view:
        with pytest.raises(OSError, match="Read-only file system"):
            os.open(view / "root.new", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        assert location_problem(view) == f"{view} is on read-only media"
        assert not writable(view / "journal.sqlite")
        with pytest.raises(ShiftbenchInputError, match="is on read-only media, and this command writes"):
            refuse_read_only_journal(view / "journal.sqlite")
        seen = as_user(NOBODY, view, view / "journal.sqlite")
    assert seen["create"] == "Read-only file system" and seen["open"] == "Read-only file system"
    assert seen["problem"] == f"{view} is on read-only media" and seen["writable"] is False
    assert sorted(p.name for p in folder.iterdir()) == ["journal.sqlite"]

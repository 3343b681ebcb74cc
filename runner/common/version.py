"""Which code this is, so that results of two commits never look alike.

    code_version()   "0.1.0+g1a2b3c4d5e6f"                  a clean git checkout: the commit
                     "0.1.0+g1a2b3c4d5e6f.dirty.9f8e7d6c"   with changes not committed: plus a hash of the
                                                            source as it is (two dirty trees differ too)
                     "0.1.0+src.0123456789ab"               an installed copy (no checkout): a hash of the
                                                            installed source

The distribution's version alone ("0.1.0") stayed the same across hundreds of commits; it is kept as the
prefix so a reader still sees the release. Runs, locked plans, audits and reports record this string;
a run journaled before it existed keeps the version it stored. Computed once per process.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from importlib import metadata
from pathlib import Path

__all__ = ["SOURCE_PACKAGES", "code_version", "source_digest"]

SOURCE_PACKAGES = ("runner", "methods", "simulators")
_SOURCE_SUFFIXES = {".py", ".toml", ".json", ".md", ".txt"}
_ROOT = Path(__file__).resolve().parents[2]
"""Where the three packages are imported from: a checkout's top, or site-packages."""
_GIT_TIMEOUT_S = 10.0


@functools.cache
def code_version() -> str:
    try:
        release = metadata.version("shiftbench")
    except metadata.PackageNotFoundError:
        release = "unknown"
    commit = _git_commit()
    if commit is None:
        return f"{release}+src.{source_digest()[:12]}"
    if _git_dirty():
        return f"{release}+g{commit[:12]}.dirty.{source_digest()[:8]}"
    return f"{release}+g{commit[:12]}"


@functools.cache
def source_digest() -> str:
    """sha256 over the packages' source files (paths and bytes, in path order; caches left out)."""
    digest = hashlib.sha256()
    for package in SOURCE_PACKAGES:
        for path in sorted((_ROOT / package).rglob("*")):
            if path.suffix in _SOURCE_SUFFIXES and "__pycache__" not in path.parts and path.is_file():
                digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _git_commit() -> str | None:
    """HEAD of the checkout the packages are imported from; None when they are not in one (an installed
    copy), git is missing, or git refuses the folder."""
    if not (_ROOT / ".git").exists():  # a folder in a checkout, a file in a worktree
        return None
    head = _git("rev-parse", "--verify", "HEAD")
    return head if head and len(head) == 40 else None


def _git_dirty() -> bool:
    """Changes to the packages' source not committed (untracked files in them count: a new module runs)."""
    status = _git("status", "--porcelain", "--untracked-files=normal", "--", *SOURCE_PACKAGES, "pyproject.toml")
    return status is None or bool(status)


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(_ROOT), *args], capture_output=True, text=True,
                              timeout=_GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None

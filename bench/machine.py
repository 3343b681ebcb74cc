"""Where a benchmark ran: cores, CPU, Python, platform, library versions and the git commit.

Every recorded result carries this, because a number without its machine is no claim at all.
"""

from __future__ import annotations

import os
import platform
import sqlite3
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["git_commit", "load_average", "machine_info"]

_PACKAGES = ("anyio", "aiosqlite", "httpx", "orjson", "uvloop")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def git_commit(root: Path) -> dict[str, Any]:
    """HEAD and whether the work tree differs from it (a dirty tree's numbers are not HEAD's)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=False)
        return done.stdout.rstrip() if done.returncode == 0 else ""  # keep porcelain's leading status columns

    commit = git("rev-parse", "HEAD")
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    return {"commit": commit or "unknown", "dirty": bool(changed), "changed": changed,
            "subject": git("log", "-1", "--format=%s")}


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages: other work on the machine shows here."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_info() -> dict[str, Any]:
    return {
        "cores_usable": _usable_cores(),
        "cores_total": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "packages": {name: _version(name) for name in _PACKAGES},
    }

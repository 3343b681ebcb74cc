"""Where shiftbench keeps its files by default: `.shiftbench/` in the working directory (the journal,
the built suites, shard journals). Here, not in `runner.schedule.sweep` which uses it, so every
command's `--journal` help names the default without importing the sweep."""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_HOME", "default_journal"]

DEFAULT_HOME = Path(".shiftbench")


def default_journal() -> Path:
    return DEFAULT_HOME / "journal.sqlite"

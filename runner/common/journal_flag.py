"""The `--journal` a hint must carry so that following it literally reads the same journal.

A hint that names a command (`shiftbench resume R`, `shiftbench estimate R`, `shiftbench runs`) is run
as printed; without the flag it would read the default journal, which does not hold a run kept
elsewhere (issue 30: the interrupt and budget hints of a run in `--journal other.sqlite` failed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from runner.common.home import default_journal

__all__ = ["journal_flag", "resume_command"]


def journal_flag(path: Path | str) -> str:
    """' --journal PATH' for a journal other than the default, '' for the default one."""
    if Path(path).resolve() == default_journal().resolve():
        return ""
    return f" --journal {path}"


@runtime_checkable
class _Located(Protocol):
    """An open journal (it knows its file)."""

    @property
    def path(self) -> Path: ...


def resume_command(run_id: str, journal: Path | str | _Located) -> str:
    """The command that continues a run, as it must be typed; `journal`: its file, or the open journal."""
    return f"shiftbench resume {run_id}{journal_flag(journal.path if isinstance(journal, _Located) else journal)}"

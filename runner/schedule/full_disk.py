"""A run whose journal's disk fills up: stopped as a budget stop is, resumable, told in one line.

The commit that found no room was rolled back whole, so the journal holds every episode committed
before it; the episodes in flight end unjournaled and run again on resume. The run's end is journaled
if the disk still takes that one small row; if not, the run stays `running` under a process that is
gone, which `runs` shows as resumable and `resume` accepts.
"""

from __future__ import annotations

import time

import anyio

from runner.journal import Batch, Journal, JournalFull
from simulators.errors import ShiftbenchInputError

__all__ = ["finish_run", "first_full", "not_started", "stopped_by_full_disk"]


def stopped_by_full_disk(full: JournalFull, run_id: str) -> ShiftbenchInputError:
    return ShiftbenchInputError(f"run {run_id} stopped: the disk holding its journal {full.path} is full; the journal "
                                f"is intact (every committed episode kept): free some space, then `shiftbench resume "
                                f"{run_id} --journal {full.path}`")


def not_started(full: JournalFull) -> ShiftbenchInputError:
    return ShiftbenchInputError(f"{full}; the run was not started and nothing of it was journaled: free some space "
                                "and start it again")


def first_full(error: BaseException) -> JournalFull | None:
    """The JournalFull inside an error or its (nested) exception groups: several streams meet the full disk
    at once, and each one's failure says the same."""
    if isinstance(error, JournalFull):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = first_full(inner)
            if found is not None:
                return found
    return None


async def finish_run(journal: Journal, run_id: str, status: str, reason: str) -> None:
    """Journal how the run ended; on a full disk, leave it `running` (resumable as a gone process's)."""
    with anyio.CancelScope(shield=True):
        try:
            await journal.commit(Batch().run_ended(run_id, status, reason, time.time()))
        except JournalFull:
            pass

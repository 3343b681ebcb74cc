"""Keeping a journal tidy: remove a run (`runs rm`), give deleted pages back to the disk (`journal vacuum`).

A run being written right now is never touched: removing it would pull rows from under its writer,
and a vacuum needs the file to itself. "Being written" is a run journaled as running whose process is
alive; a run whose process is gone is stopped and may be removed (it could also be resumed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from runner.common.liveness import process_alive
from runner.journal import Batch, EpisodeFilter, open_journal, read_only, vacuum
from simulators.errors import ShiftbenchInputError

__all__ = ["Removed", "Vacuumed", "journal_bytes", "remove_run", "vacuum_journal"]


@dataclass(frozen=True)
class Removed:
    run_id: str
    episodes: int


@dataclass(frozen=True)
class Vacuumed:
    before_bytes: int
    after_bytes: int


def journal_bytes(path: Path) -> int:
    """The journal's size on disk: the file and its write-ahead log."""
    return sum(part.stat().st_size for part in (path, Path(f"{path}-wal")) if part.exists())


async def remove_run(path: Path, run_id: str) -> Removed:
    async with read_only(path) as reader:
        run = await reader.run(run_id)
        if run is None:
            raise ShiftbenchInputError(f"{path}: no run '{run_id}' in this journal; "
                                       f"`shiftbench runs --journal {path}` lists the runs it holds")
        if run.status == "running" and process_alive(run.pid):
            raise ShiftbenchInputError(f"runs rm {run_id}: the run is being written by process {run.pid}; "
                                       "stop it (Ctrl-C) first")
        episodes = await reader.episode_matches(run_id, EpisodeFilter())
    async with open_journal(path, create=False) as journal:
        await journal.commit(Batch().delete_run(run_id))
    return Removed(run_id, episodes)


async def vacuum_journal(path: Path) -> Vacuumed:
    async with read_only(path) as reader:
        live = [run for run in await reader.runs() if run.status == "running" and process_alive(run.pid)
                and run.pid != os.getpid()]
    if live:
        raise ShiftbenchInputError(f"journal vacuum: run {live[0].run_id} is being written by process "
                                   f"{live[0].pid}; vacuum when it has stopped")
    before = journal_bytes(path)
    await vacuum(path)
    return Vacuumed(before, journal_bytes(path))

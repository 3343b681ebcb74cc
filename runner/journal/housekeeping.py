"""Keeping a journal tidy: remove a run (`runs rm`), give deleted pages back to the disk (`journal vacuum`).

A run being written right now is never touched: removing it would pull rows from under its writer,
and a vacuum needs the file to itself. "Being written" is a run whose lease is live (`runner.journal.lease`:
on this host its process alive, on another host renewed and not lapsed), or a run journaled as running
before leases whose process is alive; any other run is stopped and may be removed (or resumed).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from runner.journal import STOPPING, Batch, EpisodeFilter, open_journal, read_only, vacuum
from runner.journal.lease import lease_meta_key, live_writer
from runner.journal.read_rows import RunRow
from runner.journal.reader import Reader
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
        if (writer := await run_writer(reader, run)) is not None:
            raise ShiftbenchInputError(f"runs rm {run_id}: the run is being written by {writer}; "
                                       "stop it (Ctrl-C) first")
        episodes = await reader.episode_matches(run_id, EpisodeFilter())
    async with open_journal(path, create=False) as journal:
        await journal.commit(Batch().delete_run(run_id))
    return Removed(run_id, episodes)


async def vacuum_journal(path: Path) -> Vacuumed:
    async with read_only(path) as reader:
        live = [(run, writer) for run in await reader.runs()
                if (writer := await run_writer(reader, run, os.getpid())) is not None]
    if live:
        raise ShiftbenchInputError(f"journal vacuum: run {live[0][0].run_id} is being written by {live[0][1]}; "
                                   "vacuum when it has stopped")
    before = journal_bytes(path)
    await vacuum(path)
    return Vacuumed(before, journal_bytes(path))


async def run_writer(reader: Reader, run: RunRow, own_pid: int = 0) -> str | None:
    """Who is writing the run now, in words (None: nobody), by its lease on any host: every command that
    must not touch a running run (runs rm, vacuum, resume, a shard's start) asks this."""
    status_live = run.status == "running" or run.status.startswith(STOPPING)
    return live_writer(status_live, run.pid, "", await reader.meta(lease_meta_key(run.run_id)), time.time(), own_pid)

"""Benchmark 4: journal write throughput, group commit vs one transaction per episode.

Each episode is what the engine journals for a test episode: one `episodes` row (an ~8 kB record
blob, as the built-in suite's records average) and the `units` status update, as one `Batch`.

- one txn per episode: a single caller awaits each commit before the next (the writer never has more
  than one batch, so every episode is its own transaction);
- group commit, k committers: k callers commit concurrently and the writer folds what has arrived
  into one transaction (up to 256 batches);
- busy loop: the same, with ~1 ms of CPU work per episode on the event loop in 5 steps (as offline
  episodes do between their turns), which delays every hop of the writer's thread back to the loop;
- raw sqlite3: the same rows through the stdlib driver, synchronous, same pragmas: the floor.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.lowlevel

from bench.section import Row, Section
from runner.journal import Batch, EpisodeRow, Journal, NewRun, UnitRow, connect_sync, open_journal

__all__ = ["run_journal_write"]

RUN = "bench"
RECORD_BYTES = 8_000
CPU_STEPS = 5
COLUMNS = ["mode", "episodes", "wall_s", "episodes_per_s", "episodes_per_s_range", "us_per_episode", "transactions",
           "batches_per_txn", "mean_commit_ms"]


def _unit(i: int) -> str:
    return f"scripted|blind|bench|test|t{i:06d}"


def _units(n: int) -> list[UnitRow]:
    return [UnitRow(RUN, _unit(i), "scripted|blind|bench", "scripted", "blind", "bench", "test", 0, i, f"t{i:06d}", i,
                    "specified", "", 0) for i in range(n)]


def _episode_batch(i: int, record: bytes) -> Batch:
    """What the engine journals for a test episode, through the same typed writers."""
    row = EpisodeRow(RUN, _unit(i), "scripted|blind|bench", 1.0, "", "specified", 5, 4, 0, 0, 0, 0.0, 0.01,
                     "finished", record, b'{"checks": []}', time.time())
    return Batch().episode(row).unit_done(RUN, _unit(i))


def _units_batch(n: int) -> Batch:
    return Batch().new_run(_RUN_ROW, _units(n))


_RUN_ROW = NewRun(RUN, 0.0, 0.0, "{}", "h", "", "", "{}", "bench", None, 0)


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def _commit_all(journal: Journal, n: int, committers: int, cpu_s: float) -> list[float]:
    record = os.urandom(RECORD_BYTES)
    waits: list[float] = []
    if committers == 1:
        for i in range(n):
            started = time.perf_counter()
            await journal.commit(_episode_batch(i, record))
            waits.append(time.perf_counter() - started)
        return waits
    limiter = anyio.CapacityLimiter(committers)

    async def one(i: int) -> None:
        async with limiter:
            for _ in range(CPU_STEPS if cpu_s else 0):  # like an episode: turns of CPU, the loop runs others between
                _spin(cpu_s / CPU_STEPS)
                await anyio.lowlevel.checkpoint()
            started = time.perf_counter()
            await journal.commit(_episode_batch(i, record))
            waits.append(time.perf_counter() - started)

    async with anyio.create_task_group() as group:
        for i in range(n):
            group.start_soon(one, i)
    return waits


async def _through_journal(path: Path, n: int, committers: int, cpu_s: float = 0.0) -> Row:
    async with open_journal(path) as journal:
        await journal.commit(_units_batch(n))
        before_commits, before_batches = journal.commits, journal.batches
        started = time.perf_counter()
        waits = await _commit_all(journal, n, committers, cpu_s)
        wall = time.perf_counter() - started
        transactions = journal.commits - before_commits
        batches = journal.batches - before_batches
    return {"episodes": n, "committers": committers, "cpu_ms_per_episode": cpu_s * 1000, "wall_s": round(wall, 3),
            "transactions": transactions, "batches_per_txn": round(batches / max(1, transactions), 1),
            "mean_commit_ms": round(1000 * sum(waits) / len(waits), 3)}


def _raw_sqlite(path: Path, n: int) -> Row:
    record = os.urandom(RECORD_BYTES)
    with closing(connect_sync(path)) as db:
        _apply_sync(db, _units_batch(n))
        started = time.perf_counter()
        for i in range(n):
            _apply_sync(db, _episode_batch(i, record))
        wall = time.perf_counter() - started
    return {"episodes": n, "committers": 1, "wall_s": round(wall, 3), "transactions": n, "batches_per_txn": 1.0,
            "mean_commit_ms": round(1000 * wall / n, 3)}


def _apply_sync(db: sqlite3.Connection, batch: Batch) -> None:
    """One transaction of the batch's statements through the stdlib driver, no thread hop."""
    db.execute("BEGIN")
    for statement in batch.statements:
        db.execute(statement.sql, statement.params)
    for sql, rows in batch.many:
        db.executemany(sql, rows)
    db.execute("COMMIT")


@dataclass(frozen=True)
class Case:
    mode: str
    committers: int
    cpu_s: float = 0.0
    raw: bool = False


CASES = (Case("one txn per episode (1 caller)", 1), Case("group commit, 8 committers", 8),
         Case("group commit, 64 committers", 64), Case("group commit, 256 committers", 256),
         Case("group commit, 64, busy loop (1 ms CPU/ep)", 64, cpu_s=0.001),
         Case("raw sqlite3, 1 txn/episode", 1, raw=True))


async def _run_case(case: Case, path: Path, n: int) -> Row:
    if case.raw:
        return await anyio.to_thread.run_sync(_raw_sqlite, path, n)
    return await _through_journal(path, n, case.committers, case.cpu_s)


def _median_row(case: Case, runs: list[Row]) -> Row:
    """The median run by wall time, with the spread of all runs."""
    ranked = sorted(runs, key=lambda r: float(r["wall_s"]))
    row = dict(ranked[len(ranked) // 2])
    n = int(row["episodes"])
    rates = [round(n / float(r["wall_s"])) for r in ranked]
    return {"mode": case.mode, **row, "episodes_per_s": round(n / float(row["wall_s"])),
            "us_per_episode": round(1e6 * float(row["wall_s"]) / n, 1), "runs": len(runs),
            "episodes_per_s_range": [min(rates), max(rates)]}


async def run_journal_write(mode: str) -> Section:
    n, reps = {"full": (2_000, 5), "quick": (1_000, 3), "smoke": (100, 1)}[mode]
    busy = n // 2  # CPU-bound by design (1 ms an episode): fewer episodes say the same
    section = Section("journal write throughput",
                      f"{n} test-episode batches ({busy} in the busy-loop row): an episodes row with an "
                      f"{RECORD_BYTES // 1000} kB record + the units update, into a fresh WAL journal "
                      f"(synchronous=NORMAL) on local disk; median of {reps} runs, the runs interleaved.", COLUMNS)
    started = time.perf_counter()
    runs: dict[Case, list[Row]] = {case: [] for case in CASES}
    with tempfile.TemporaryDirectory(prefix="shiftbench-journal-") as tmp:
        for rep in range(reps):
            for index, case in enumerate(CASES):
                path = Path(tmp) / f"case{index}-run{rep}.sqlite"
                runs[case].append(await _run_case(case, path, busy if case.cpu_s else n))
    section.rows = [_median_row(case, case_runs) for case, case_runs in runs.items()]
    section.notes.append("the journal pays one thread round trip (see the conditions line) per transaction, "
                         "however many statements it holds; the raw sqlite3 row pays none")
    section.seconds = time.perf_counter() - started
    return section

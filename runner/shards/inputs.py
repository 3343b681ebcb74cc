"""The journals named to `journal merge`, read: every shard run each one holds, with what merge checks.

Only reads (each journal through its own read-only connection). A journal with no shard run in it (a
one-process run, an already merged journal) is refused here, with one line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from runner.journal import STOPPING, Reader, RunRow, read_only
from runner.journal.lease import lease_meta_key
from runner.journal.sweep_record import SHARD_PREFIX, SWEEP_PREFIX, ShardRecord
from runner.schedule.lease_keeper import live_writer
from simulators.errors import ShiftbenchInputError

__all__ = ["ShardInput", "read_inputs"]


@dataclass(frozen=True)
class ShardInput:
    path: Path
    record: ShardRecord
    run: RunRow
    units_done: int
    units_planned: int
    spent_usd: float
    streams: dict[str, int]
    """The streams it journaled units of -> its finished episodes in each."""
    meta: list[tuple[str, str]]
    """Its `run:<run id>:...` meta rows (machine, served model versions)."""

    @property
    def name(self) -> str:
        return f"shard {self.record.index}/{self.record.count} ({self.path})"

    lease: str | None = None
    """Its run's lease row (`runner.journal.lease`), None in a journal from before leases."""

    def writer(self, now: float) -> str | None:
        """Who may still be writing it, in words (None: nobody): a live lease's holder, on any host."""
        live = self.run.status == "running" or self.run.status.startswith(STOPPING)
        return live_writer(live, self.run.pid, self.record.host, self.lease, now)


async def read_inputs(paths: list[Path]) -> list[ShardInput]:
    found: list[ShardInput] = []
    for path in paths:
        _check_is_file(path)
        async with read_only(path) as reader:
            found += await _shards_of(reader, path)
    return found


def _check_is_file(path: Path) -> None:
    if not path.is_file():
        raise ShiftbenchInputError(f"journal merge {path}: no journal file here; name the shards' journal files")


async def _shards_of(reader: Reader, path: Path) -> list[ShardInput]:
    records = await reader.meta_prefixed(SHARD_PREFIX)
    if not records:
        merged = await reader.meta_prefixed(SWEEP_PREFIX)
        what = "a merged journal" if merged else "no shard of a sweep"
        runs = ", ".join(run.run_id for run in await reader.runs()) or "none"
        raise ShiftbenchInputError(f"journal merge {path}: holds {what} (runs: {runs}); merge the journals that "
                                   "`shiftbench run --shard` wrote")
    progress = await reader.unit_progress()
    shards = []
    for key, text in records:
        try:
            record = ShardRecord.from_json(text)
        except (ValueError, TypeError, KeyError) as exc:
            raise ShiftbenchInputError(f"journal merge {path}: the shard record {key} is damaged ({exc}); rerun "
                                       "that shard into a new journal") from exc
        run = await reader.run(record.run_id)
        if run is None:
            raise ShiftbenchInputError(f"journal merge {path}: shard {record.index}/{record.count} is recorded but "
                                       f"its run {record.run_id} is not there (removed?); rerun that shard")
        episodes: dict[str, int] = {}
        for row in await reader.stream_episodes(run.run_id):
            episodes[row.stream_id] = episodes.get(row.stream_id, 0) + row.episodes
        streams = {s.stream_id: episodes.get(s.stream_id, 0) for s in await reader.streams_of_run(run.run_id)}
        units = progress.get(run.run_id)
        shards.append(ShardInput(path, record, run, units.done if units else 0, units.total if units else 0,
                                 (await reader.spend(run.run_id)).total, streams,
                                 await reader.meta_prefixed(f"run:{run.run_id}:"),
                                 await reader.meta(lease_meta_key(run.run_id))))
    return shards

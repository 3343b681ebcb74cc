"""Joining shard journals into one: the SQL of `shiftbench journal merge`.

The merged journal holds one run, the sweep, whose rows are the shards' rows of the streams each one
ran, with their run id replaced by the sweep's. Units go in the sweep's plan order (every report,
export and projection reads in unit order, so a merge reads exactly as a one-process run): each
source's units are staged with their stream's position in the plan and their own order, then written
sorted. Episodes, their audits, model calls (a shard's probes too: they were paid), checkpoints and
cached answers are copied as they are. Columns are read from the schema, so a table that gains a
column copies it without a change here. Audit replays (keyed by their own ids) are not copied: run
them on the merged journal.

The caller writes into a new file no one else opens and renames it into place when `write_merged`
returns, so a merge is whole or absent. Sources are attached read-only, one at a time (SQLite attaches
ten databases at most).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from runner.journal.read_rows import RunRow
from runner.journal.schema import connect_writer, read_only_uri

__all__ = ["MergeSource", "UnitResult", "unit_results", "write_merged"]

_COPIED_BY_STREAM = ("episodes", "episode_audits", "checkpoints")
_RUN_COLUMNS = ", ".join(RunRow._fields)
_INSERT_RUN = f"INSERT INTO main.runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * len(RunRow._fields))})"
_INSERT_META = "INSERT OR REPLACE INTO main.meta (key, value) VALUES (?, ?)"
_STREAM_META = ("method_time|", "method_error|")
_CHOSEN_UNITS = ("(SELECT unit_id FROM source.units WHERE run_id = :shard "
                 "AND stream_id IN (SELECT stream_id FROM temp.chosen))")
"""Meta rows kept per stream as PREFIX|RUN|STREAM (runner.schedule.method_time, method_errors): a
merged stream keeps its method's time and failure under the sweep's run id."""
_COPY_STREAM_META = ("INSERT OR REPLACE INTO main.meta (key, value) SELECT :prefix || :sweep || '|' || c.stream_id, "
                     "m.value FROM source.meta m JOIN temp.chosen c ON m.key = :prefix || :shard || '|' || c.stream_id")
_CHOSEN = "CREATE TEMP TABLE chosen (stream_id TEXT PRIMARY KEY, position INTEGER NOT NULL)"
_CHOOSE = "INSERT INTO temp.chosen (stream_id, position) VALUES (?, ?)"
_UNCHOOSE = "DELETE FROM temp.chosen"
_STAGE = "CREATE TEMP TABLE staged AS SELECT 0 AS position, 0 AS source_order, * FROM main.units WHERE 0"
_UNIT_RESULTS = """
SELECT e.unit_id, e.stream_id, e.reward, e.record, e.grade_details, e.cost_usd, e.turns, e.tool_calls,
       e.input_tokens, e.cached_input_tokens, e.output_tokens, e.end_reason FROM episodes e
WHERE e.run_id = ? AND e.stream_id IN (SELECT value FROM json_each(?))
"""


@dataclass(frozen=True)
class MergeSource:
    path: Path
    run_id: str
    """The shard's run in that journal."""
    streams: Sequence[str]
    """The streams to take from it."""


@dataclass(frozen=True)
class UnitResult:
    stream_id: str
    reward: float
    parts: tuple[tuple[str, str], ...]
    """(what, sha256 of it) for each part of the episode two copies must agree on: its reward, its steps
    (the record), its grade details and its cost and size (dollars, turns, tool calls, tokens, how it
    ended); the wall clock (latency, finish time) may differ."""

    @property
    def digest(self) -> str:
        return hashlib.sha256(repr(self.parts).encode()).hexdigest()

    def differs_in(self, other: UnitResult) -> list[str]:
        return [what for (what, mine), (_, theirs) in zip(self.parts, other.parts, strict=True) if mine != theirs]


def unit_results(path: Path, run_id: str, streams: Sequence[str]) -> dict[str, UnitResult]:
    """Unit id -> what was journaled for it, over some streams of one run (overlapping sources)."""
    connection = sqlite3.connect(read_only_uri(path), uri=True)
    try:
        rows = connection.execute(_UNIT_RESULTS, (run_id, orjson.dumps(list(streams)).decode())).fetchall()
    finally:
        connection.close()
    return {str(row[0]): _result(row) for row in rows}


def _result(row: tuple[Any, ...]) -> UnitResult:
    _, stream, reward, record, grade, *cost = row
    parts = (("reward", _digest(repr(float(reward)).encode())), ("steps", _digest(bytes(record))),
             ("grade", _digest(bytes(grade))), ("cost", _digest(orjson.dumps(cost))))
    return UnitResult(str(stream), float(reward), parts)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_merged(target: Path, run: RunRow, sources: Sequence[MergeSource], order: Sequence[str],
                 meta: Mapping[str, str]) -> None:
    """Write the sweep's run, its sources' rows and `meta` into the new journal `target` (a file no one
    else opens: the caller renames it into place once this returns). `order` is every stream of the
    sweep in plan order."""
    connect_writer(target, create=True).close()  # the schema and version, as any journal gets them
    connection = sqlite3.connect(target.resolve().as_uri(), uri=True, isolation_level=None)
    try:
        position = {stream: i for i, stream in enumerate(order)}
        connection.execute(_CHOSEN)
        connection.execute(_STAGE)
        connection.execute(_INSERT_RUN, tuple(run))
        for source in sources:
            _copy_source(connection, source, run.run_id, position)
        unit_columns = _columns(connection, "units")
        connection.execute("BEGIN")
        connection.execute(f"INSERT INTO main.units ({unit_columns}) SELECT {unit_columns} FROM temp.staged "
                           "ORDER BY position, source_order")
        connection.executemany(_INSERT_META, sorted(meta.items()))
        connection.execute("COMMIT")
    finally:
        connection.close()


def _copy_source(connection: sqlite3.Connection, source: MergeSource, sweep_run: str,
                 position: Mapping[str, int]) -> None:
    """One source's rows of its chosen streams, in one transaction (ATTACH itself cannot be in one)."""
    connection.execute("ATTACH DATABASE ? AS source", (read_only_uri(source.path),))
    try:
        connection.execute("BEGIN")
        connection.execute(_UNCHOOSE)
        connection.executemany(_CHOOSE, [(stream, position[stream]) for stream in source.streams])
        names = {"sweep": sweep_run, "shard": source.run_id}
        units = _columns(connection, "units", run_id=":sweep", prefix="u.")
        connection.execute(f"INSERT INTO temp.staged SELECT c.position, u.rowid, {units} FROM source.units u "
                           "JOIN temp.chosen c ON c.stream_id = u.stream_id WHERE u.run_id = :shard", names)
        for table in _COPIED_BY_STREAM:
            _copy(connection, table, "stream_id IN (SELECT stream_id FROM temp.chosen)", names)
        _copy(connection, "model_calls", "(stream_id = '' OR stream_id IN (SELECT stream_id FROM temp.chosen))",
              names, skip=("id",))
        _copy(connection, "response_cache", "unit_id IN (SELECT unit_id FROM source.units WHERE run_id = :shard "
                                            "AND stream_id IN (SELECT stream_id FROM temp.chosen))", names,
              verb="INSERT OR REPLACE")
        # A batched shard's batches and items (`--batch tests`): labels carry the shard's run id, so two
        # shards' batches never collide, and the merged report counts them as the one process would.
        _copy(connection, "batch_items", f"unit_id IN {_CHOSEN_UNITS}", names)
        _copy(connection, "provider_batches", "label IN (SELECT label FROM source.batch_items WHERE run_id = :shard "
                                              f"AND unit_id IN {_CHOSEN_UNITS})", names)
        for prefix in _STREAM_META:
            connection.execute(_COPY_STREAM_META, {**names, "prefix": prefix})
        connection.execute("COMMIT")
    finally:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        connection.execute("DETACH DATABASE source")


def _copy(connection: sqlite3.Connection, table: str, where: str, names: Mapping[str, str],
          skip: Sequence[str] = (), verb: str = "INSERT") -> None:
    target = _columns(connection, table, skip=skip)
    selected = _columns(connection, table, run_id=":sweep", skip=skip)
    connection.execute(f"{verb} INTO main.{table} ({target}) SELECT {selected} FROM source.{table} "
                       f"WHERE run_id = :shard AND {where}", names)


def _columns(connection: sqlite3.Connection, table: str, run_id: str = "run_id", prefix: str = "",
             skip: Sequence[str] = ()) -> str:
    """The table's columns in order, `run_id` replaced by the given expression (a parameter)."""
    names = [str(row[1]) for row in connection.execute(f"PRAGMA main.table_info({table})")]
    return ", ".join(run_id if name == "run_id" else f"{prefix}{name}" for name in names if name not in skip)

"""Named queries over a read-only connection: everything the runner, the reports and `bench/` read.

A `Reader` has its own connection, so under WAL it reads beside the writer without waiting for it and
only ever sees committed transactions. Each query is one method returning typed rows; one aiosqlite
round trip each (`execute_fetchall`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import aiosqlite

from runner.journal.analysis_queries import AnalysisQueries
from runner.journal.batch_journal import BatchQueries
from runner.journal.batch_queries import BatchFigureQueries
from runner.journal.call_queries import CallQueries
from runner.journal.hold_queries import HoldQueries
from runner.journal.read_rows import (
    EpisodeCost,
    EpisodeEnd,
    FinishedEpisode,
    FinishedSpend,
    PlannedSetting,
    RunRow,
    Spend,
    StoredCheckpoint,
    StoredEpisodeAudit,
    StreamEpisodes,
    StreamNames,
    TestOutcome,
    TestScore,
    UnitProgress,
)
from runner.journal.retry_queries import RetryQueries
from runner.journal.rows import AuditRow, CheckpointKey
from runner.journal.view_queries import ViewQueries

__all__ = ["Reader", "round_trip_us"]

ReadObserver = Callable[[float], None]
"""Called with the seconds each read took (a benchmark's meter)."""

_RUN_COLUMNS = ", ".join(RunRow._fields)

# ---------------------------------------------------------------------------------------- the runner
_RUN = f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?"
_DONE_UNITS = "SELECT unit_id FROM units WHERE run_id = ? AND stream_id = ? AND status = 'done'"
_CHECKPOINT = "SELECT position, state FROM checkpoints WHERE run_id = ? AND stream_id = ? AND label = ?"
_SERVING_RECORDS_AFTER = (
    "SELECT u.task_id, e.record FROM units u JOIN episodes e ON e.run_id = u.run_id AND e.unit_id = u.unit_id "
    "WHERE u.run_id = ? AND u.stream_id = ? AND u.phase = 'serving' AND u.position > ?")
_FINISHED_EPISODES = (
    "SELECT u.stream_id, u.phase, e.category, e.reward FROM units u JOIN episodes e "
    "ON e.run_id = u.run_id AND e.unit_id = u.unit_id WHERE u.run_id = ?")
_EPISODE_COUNT = "SELECT count(*) FROM episodes WHERE run_id = ?"
_CACHED_UNITS = "SELECT DISTINCT unit_id FROM response_cache WHERE run_id = ?"
_CACHED_ANSWERS = "SELECT request_hash, response FROM response_cache WHERE run_id = ? AND unit_id = ?"
_CALL_COUNT = "SELECT count(*) FROM model_calls WHERE run_id = ?"

# ------------------------------------------------------------------------------- spend (one rule)
# Calls by purpose and the episodes' own agent cost (purpose NULL), per run; `Spend` applies the rule.
_SPEND = """
SELECT run_id, purpose, sum(cost_usd) FROM model_calls {where} GROUP BY run_id, purpose
UNION ALL
SELECT run_id, NULL, sum(cost_usd) FROM episodes {where} GROUP BY run_id
"""
_SPEND_OF_RUN = _SPEND.format(where="WHERE run_id = ?")
# What finished tasks cost: their episodes and the calls of their units (agent, judge), plus the
# learners' calls; never a probe, nor the calls of a unit that did not finish.
_FINISHED_SPEND = """
SELECT (SELECT count(*) FROM episodes WHERE run_id = ?1),
       (SELECT coalesce(sum(c.cost_usd), 0) FROM model_calls c
        JOIN units u ON u.run_id = c.run_id AND u.unit_id = c.unit_id
        WHERE c.run_id = ?1 AND u.status = 'done'),
       (SELECT coalesce(sum(cost_usd), 0) FROM model_calls WHERE run_id = ?1 AND purpose = 'method'),
       (SELECT coalesce(sum(cost_usd), 0) FROM episodes WHERE run_id = ?1),
       (SELECT count(*) FROM model_calls WHERE run_id = ?1 AND purpose = 'agent')
"""
_SPEND_OF_ALL = _SPEND.format(where="")

# ----------------------------------------------------------------------------------------- `runs`
_RUNS = f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY created_at DESC"
_UNIT_PROGRESS = "SELECT run_id, count(*), sum(status = 'done') FROM units GROUP BY run_id"
_STREAM_NAMES = "SELECT run_id, model, method FROM units GROUP BY run_id, model, method ORDER BY min(rowid)"

# ---------------------------------------------------------------------------------------- reports
# Ordered by first planned unit, so streams appear in the order the run configured them.
_PLANNED_SETTINGS = """
SELECT model, method, scenario, sum(phase = 'test'), sum(phase = 'test' AND status = 'done')
FROM units WHERE run_id = ? GROUP BY model, method, scenario ORDER BY min(rowid)
"""
_TEST_SCORES = """
SELECT u.model, u.method, u.scenario, u.window, e.category, count(*), sum(e.reward)
FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id
WHERE e.run_id = ? AND u.phase = 'test'
GROUP BY u.model, u.method, u.scenario, u.window, e.category
"""
_EPISODE_COSTS = """
SELECT u.model, u.method, e.latency_s, e.input_tokens, e.output_tokens, e.cost_usd
FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id
WHERE e.run_id = ?
"""
_EPISODE_ENDS = """
SELECT u.model, u.method, u.scenario, u.phase, e.end_reason, e.turns, e.tool_calls, e.reward
FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id
WHERE e.run_id = ? ORDER BY u.rowid
"""
_STREAM_EPISODES = """
SELECT u.stream_id, u.phase, count(*), sum(e.turns), max(e.finished_at)
FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id
WHERE e.run_id = ? GROUP BY u.stream_id, u.phase
"""

# ----------------------------------------------------------------------------------------- audits
_EPISODE_AUDITS = """
SELECT u.model, u.method, u.scenario, u.phase, a.unit_id, a.state_match, a.state_unchanged,
       a.writes_proposed, a.writes_executed, a.writes_changing, a.escalated
FROM episode_audits a JOIN units u ON u.run_id = a.run_id AND u.unit_id = a.unit_id
WHERE a.run_id = ? ORDER BY u.rowid
"""
_AUDIT = f"SELECT {', '.join(AuditRow._fields)} FROM audits WHERE audit_id = ?"
_AUDIT_CASES = "SELECT case_id, verdict, details FROM audit_cases WHERE audit_id = ? ORDER BY case_id"


# --------------------------------------------------------------------------------------- evidence
_TEST_OUTCOMES = """
SELECT u.model, u.method, u.scenario, u.task_id, u.family, u.category, u.window, u.repetition, e.reward,
       e.turns, e.tool_calls, e.input_tokens, e.output_tokens, e.cost_usd, e.latency_s, u.replica
FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id
WHERE e.run_id = ? AND u.phase = 'test'
ORDER BY u.rowid
"""
_META = "SELECT value FROM meta WHERE key = ?"
_META_PREFIXED = "SELECT key, value FROM meta WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key"


class Reader(ViewQueries, CallQueries, RetryQueries, AnalysisQueries, BatchQueries, BatchFigureQueries,
             HoldQueries):
    """The journal's named queries, over one read-only connection (the views' in `ViewQueries`, those
    over model calls in `CallQueries`, the retries' in `RetryQueries`, the provider batches' in
    `BatchQueries` and their figures for reports in `BatchFigureQueries`, the budget holds in `HoldQueries`)."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._connection = connection
        self.observer: ReadObserver | None = None

    # ------------------------------------------------------------------------------------- the runner

    async def run(self, run_id: str) -> RunRow | None:
        rows = await self._rows(_RUN, (run_id,))
        return RunRow._make(rows[0]) if rows else None

    async def done_units(self, run_id: str, stream_id: str) -> set[str]:
        """The units of a stream whose episode is journaled: a resume skips them."""
        return {row[0] for row in await self._rows(_DONE_UNITS, (run_id, stream_id))}

    async def checkpoint(self, run_id: str, stream_id: str, key: CheckpointKey) -> StoredCheckpoint | None:
        rows = await self._rows(_CHECKPOINT, (run_id, stream_id, key.label))
        return StoredCheckpoint._make(rows[0]) if rows else None

    async def serving_records_after(self, run_id: str, stream_id: str, position: int) -> dict[str, bytes]:
        """Task id -> episode record (JSON bytes) of the stream's serving episodes journaled after a
        checkpoint's position: what a resume replays `learn` on."""
        return {row[0]: row[1] for row in await self._rows(_SERVING_RECORDS_AFTER, (run_id, stream_id, position))}

    async def finished_episodes(self, run_id: str) -> list[FinishedEpisode]:
        return [FinishedEpisode._make(row) for row in await self._rows(_FINISHED_EPISODES, (run_id,))]

    async def episode_count(self, run_id: str) -> int:
        return int((await self._rows(_EPISODE_COUNT, (run_id,)))[0][0])

    async def model_call_count(self, run_id: str) -> int:
        return int((await self._rows(_CALL_COUNT, (run_id,)))[0][0])

    async def spend(self, run_id: str) -> Spend:
        """What the run spent, by purpose (`Spend` holds the rule); the budget, pilot, `runs` and the
        report all read it here."""
        return _spends(await self._rows(_SPEND_OF_RUN, (run_id, run_id))).get(run_id, Spend())

    async def finished_spend(self, run_id: str) -> FinishedSpend:
        """Finished tasks and what they cost (the pilot's projection starts from it)."""
        tasks, unit_calls, method_calls, episodes, agent_calls = (await self._rows(_FINISHED_SPEND, (run_id,)))[0]
        # Spend's rule: the episodes' own agent cost stands in when no agent call was journaled.
        cost = float(unit_calls) if agent_calls else float(unit_calls) + float(episodes)
        return FinishedSpend(int(tasks), cost + float(method_calls))

    # ------------------------------------------------------------------------------ the response cache

    async def cached_units(self, run_id: str) -> set[str]:
        """The units of a run with cached answers: every other unit's calls skip the cache."""
        return {row[0] for row in await self._rows(_CACHED_UNITS, (run_id,))}

    async def cached_answers(self, run_id: str, unit_id: str) -> dict[str, bytes]:
        """Request hash -> response (JSON bytes) of one unit: loaded once when its episode starts."""
        return {row[0]: row[1] for row in await self._rows(_CACHED_ANSWERS, (run_id, unit_id))}

    # -------------------------------------------------------------------------------------- `runs`

    async def runs(self) -> list[RunRow]:
        """Every run, newest first."""
        return [RunRow._make(row) for row in await self._rows(_RUNS)]

    async def unit_progress(self) -> dict[str, UnitProgress]:
        """Per run: planned units and done ones."""
        return {row[0]: UnitProgress(int(row[1]), int(row[2] or 0)) for row in await self._rows(_UNIT_PROGRESS)}

    async def stream_names(self) -> list[StreamNames]:
        """(run, model, method) in planning order."""
        return [StreamNames._make(row) for row in await self._rows(_STREAM_NAMES)]

    async def spend_by_run(self) -> dict[str, Spend]:
        return _spends(await self._rows(_SPEND_OF_ALL))

    # ------------------------------------------------------------------------------------- reports

    async def planned_settings(self, run_id: str) -> list[PlannedSetting]:
        return [PlannedSetting._make(row) for row in await self._rows(_PLANNED_SETTINGS, (run_id,))]

    async def test_scores(self, run_id: str) -> list[TestScore]:
        """Finished test episodes per (model, method, scenario, window, category): count and reward sum."""
        return [TestScore._make(row) for row in await self._rows(_TEST_SCORES, (run_id,))]

    async def episode_costs(self, run_id: str) -> list[EpisodeCost]:
        return [EpisodeCost._make(row) for row in await self._rows(_EPISODE_COSTS, (run_id,))]

    async def episode_ends(self, run_id: str) -> list[EpisodeEnd]:
        return [EpisodeEnd._make(row) for row in await self._rows(_EPISODE_ENDS, (run_id,))]

    async def stream_episodes(self, run_id: str) -> list[StreamEpisodes]:
        """Per stream and phase: episodes, turns, when the last one was journaled (a benchmark's clock)."""
        return [StreamEpisodes._make(row) for row in await self._rows(_STREAM_EPISODES, (run_id,))]

    # ------------------------------------------------------------------------------------ evidence

    async def test_outcomes(self, run_id: str) -> list[TestOutcome]:
        """Every finished test episode with its task's family, repetition and stream replica, in planning order."""
        return [TestOutcome._make(row) for row in await self._rows(_TEST_OUTCOMES, (run_id,))]

    async def meta_prefixed(self, prefix: str) -> list[tuple[str, str]]:
        """The meta table's (key, value) pairs whose key starts with `prefix`, by key."""
        return [(str(key), str(value)) for key, value in await self._rows(_META_PREFIXED, (prefix,))]

    async def meta(self, key: str) -> str | None:
        """A value of the meta table (the schema version, a run's machine), None when absent."""
        rows = await self._rows(_META, (key,))
        return str(rows[0][0]) if rows else None
    # -------------------------------------------------------------------------------------- audits

    async def episode_audits(self, run_id: str) -> list[StoredEpisodeAudit]:
        """Every audited episode of a run, in planning order (reports, gates)."""
        return [StoredEpisodeAudit(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), _flag(row[5]),
                                   _flag(row[6]), int(row[7]), int(row[8]), int(row[9]), bool(row[10]))
                for row in await self._rows(_EPISODE_AUDITS, (run_id,))]

    async def audit(self, audit_id: str) -> AuditRow | None:
        rows = await self._rows(_AUDIT, (audit_id,))
        return AuditRow._make(rows[0]) if rows else None

    async def audit_cases(self, audit_id: str) -> dict[str, tuple[str, bytes]]:
        """Case id -> (verdict, details JSON) of an audit's finished cases: a resume skips them."""
        return {row[0]: (row[1], row[2]) for row in await self._rows(_AUDIT_CASES, (audit_id,))}

    # ------------------------------------------------------------------------------------ ad hoc

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Raw SQL: for tests' assertions. Source code adds a named query above."""
        return await self._rows(sql, params)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """Raw SQL: for tests' assertions. Source code adds a named query above."""
        rows = await self._rows(sql, params)
        return rows[0] if rows else None

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self.observer is None:
            return [tuple(row) for row in await self._connection.execute_fetchall(sql, params)]
        started = time.perf_counter()
        try:
            return [tuple(row) for row in await self._connection.execute_fetchall(sql, params)]
        finally:
            self.observer(time.perf_counter() - started)


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _spends(rows: list[tuple[Any, ...]]) -> dict[str, Spend]:
    calls: dict[str, dict[str, float]] = defaultdict(dict)
    episodes: dict[str, float] = {}
    for run_id, purpose, cost in rows:
        if purpose is None:
            episodes[run_id] = float(cost or 0.0)
        else:
            calls[run_id][purpose] = float(cost or 0.0)
    return {run_id: Spend(calls.get(run_id, {}), episodes.get(run_id, 0.0)) for run_id in set(calls) | set(episodes)}


async def round_trip_us(calls: int = 500) -> float:
    """One aiosqlite call (a trivial query on an in-memory database), in microseconds: the thread hop
    every journal statement and read pays. On a 2-core VM it swings with the other core's load, so
    benchmarks record it next to their figures."""
    async with aiosqlite.connect(":memory:") as db:
        await db.execute("SELECT 1")
        started = time.perf_counter()
        for _ in range(calls):
            await db.execute("SELECT 1")
        return round(1e6 * (time.perf_counter() - started) / calls, 1)

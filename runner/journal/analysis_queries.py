"""The named queries of the notebook API (`runner.analysis`): a run's finished episodes as figures (no
records: a full sweep's records are hundreds of MB) and its model calls, each row as journaled.

A mixin of `Reader` (runner.journal.reader); each query is one statement and one round trip.
"""

from __future__ import annotations

from typing import NamedTuple

from runner.journal.query_group import QueryGroup
from runner.journal.rows import ModelCallRow

__all__ = ["AnalysisQueries", "EpisodeFigures"]


class EpisodeFigures(NamedTuple):
    """One finished episode's figures without its record: tokens, cost and latency as the episode's row
    stored them (what its last process paid; a resumed episode's earlier calls are in `model_calls`)."""

    unit_id: str
    model: str
    method: str
    scenario: str
    phase: str
    window: int
    task_id: str
    category: str
    replica: int
    reward: float
    judge: str
    end_reason: str
    turns: int
    tool_calls: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    finished_at: float


_UNIT_COLUMNS = ("unit_id", "model", "method", "scenario", "phase", "window", "task_id", "replica")
_EPISODE_FIGURES = (
    f"SELECT {', '.join(('u.' if n in _UNIT_COLUMNS else 'e.') + n for n in EpisodeFigures._fields)} "
    "FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id "
    "WHERE e.run_id = ? ORDER BY u.rowid")
_MODEL_CALLS = f"SELECT {', '.join(ModelCallRow._fields)} FROM model_calls WHERE run_id = ? ORDER BY id"


class AnalysisQueries(QueryGroup):
    """The notebook API's queries; `Reader` supplies `_rows`."""

    async def episode_figures(self, run_id: str) -> list[EpisodeFigures]:
        """Every finished episode of the run, in planning order."""
        return [EpisodeFigures._make(row) for row in await self._rows(_EPISODE_FIGURES, (run_id,))]

    async def model_calls(self, run_id: str) -> list[ModelCallRow]:
        """Every model call the run journaled (paid, replayed from the cache, failed), in the order sent."""
        rows = [ModelCallRow._make(row) for row in await self._rows(_MODEL_CALLS, (run_id,))]
        # SQLite hands the two flags back as 0/1.
        return [row._replace(from_cache=bool(row.from_cache), usage_estimated=bool(row.usage_estimated))
                for row in rows]

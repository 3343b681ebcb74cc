"""The named queries over a run's budget holds (`budget_holds`): what an earlier process left open, when
each request last got a call row, and what the run lost to calls a killed process had in flight.

A mixin of `Reader` (runner.journal.reader), like `BatchQueries`.
"""

from __future__ import annotations

from typing import NamedTuple

from runner.journal.query_group import QueryGroup

__all__ = ["HoldQueries", "HoldRow"]


class HoldRow(NamedTuple):
    hold_id: str
    request_hash: str
    amount_usd: float
    created_at: float


_OPEN = "SELECT hold_id, request_hash, amount_usd, created_at FROM budget_holds WHERE run_id = ? AND status = 'open'"
_LAST_CALLS = ("SELECT request_hash, max(created_at) FROM model_calls WHERE run_id = ? AND created_at >= ? "
               "GROUP BY request_hash")
_LOST = "SELECT coalesce(sum(amount_usd), 0) FROM budget_holds WHERE run_id = ? AND status = 'lost'"


class HoldQueries(QueryGroup):
    async def open_holds(self, run_id: str) -> list[HoldRow]:
        return [HoldRow._make(row) for row in await self._rows(_OPEN, (run_id,))]

    async def last_call_times(self, run_id: str, since: float) -> dict[str, float]:
        """Per request hash, when its latest call row (from `since` on) was journaled."""
        return {str(row[0]): float(row[1]) for row in await self._rows(_LAST_CALLS, (run_id, since))}

    async def lost_usd(self, run_id: str) -> float:
        """The worst cases of the calls killed processes had in flight, unsettled by any call row."""
        return float((await self._rows(_LOST, (run_id,)))[0][0])

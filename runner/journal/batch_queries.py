"""The named queries of a batched run's figures: what it spent live and through batch APIs, its items per
outcome, and the batches still outstanding (what `runs rm` must cancel). The batcher's own queries (the
batches and items a resume picks up) are `batch_journal`'s, whose `ProviderBatchRow` these return too.

A mixin of `Reader` (runner.journal.reader), like `CallQueries`. A batch item's `custom_id` is its
request's hash, so an item that failed and was then sent live is found as a live call of the same unit
with that `request_hash`.
"""

from __future__ import annotations

from typing import NamedTuple

from runner.journal.batch_journal import ProviderBatchRow
from runner.journal.query_group import QueryGroup

__all__ = ["OUTSTANDING_STATUSES", "BatchCallSpend", "BatchFigureQueries", "BatchItemOutcome"]

OUTSTANDING_STATUSES = ("submitting", "submitted")
"""A batch in one of these may still be processed, and billed, by its provider."""


class BatchCallSpend(NamedTuple):
    """Calls of one stream to one model by one route ('live' or 'batch'): spend over every call, tokens
    over the calls sent (a replayed answer sent nothing)."""

    stream_model: str | None
    method: str | None
    """None for a call no stream claims (the run's probe)."""
    called: str
    route: str
    calls: int
    """Calls sent (replayed answers left out)."""
    cost_usd: float
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int
    output_tokens: int


class BatchItemOutcome(NamedTuple):
    """Items of a run in one status, and how many of them were in a resubmission batch."""

    status: str
    items: int
    resubmitted: int


_BATCH_CALL_SPEND = """
SELECT coalesce(u.model, s.model), coalesce(u.method, s.method), c.model, c.route, sum(c.from_cache = 0),
       sum(c.cost_usd), sum(c.input_tokens * (c.from_cache = 0)), sum(c.cached_input_tokens * (c.from_cache = 0)),
       sum(c.cache_write_tokens * (c.from_cache = 0)), sum(c.cache_write_1h_tokens * (c.from_cache = 0)),
       sum(c.output_tokens * (c.from_cache = 0))
FROM model_calls c
LEFT JOIN units u ON u.run_id = c.run_id AND u.unit_id = c.unit_id
LEFT JOIN (SELECT DISTINCT stream_id, model, method FROM units WHERE run_id = ?1) s ON s.stream_id = c.stream_id
WHERE c.run_id = ?1
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
"""
_OUTSTANDING = (f"SELECT {', '.join(ProviderBatchRow._fields)} FROM provider_batches WHERE run_id = ? "
                f"AND status IN ({', '.join(repr(s) for s in OUTSTANDING_STATUSES)}) ORDER BY submitted_at, label")
_ITEM_OUTCOMES = """
SELECT i.status, count(*), sum(b.resubmission != 0)
FROM batch_items i JOIN provider_batches b ON b.run_id = i.run_id AND b.label = i.label
WHERE i.run_id = ? GROUP BY i.status ORDER BY i.status
"""
# The most batches one episode's requests went through: the rounds a test episode waited on, one per turn
# (whatever the number of batches a round was split into at max_items).
_ROUNDS = """
SELECT max(n) FROM (SELECT count(DISTINCT label) AS n FROM batch_items WHERE run_id = ? GROUP BY unit_id)
"""
_SENT_LIVE = """
SELECT count(DISTINCT i.unit_id || ' ' || i.custom_id) FROM batch_items i
WHERE i.run_id = ?1 AND i.status IN ('errored', 'expired', 'canceled')
  AND EXISTS (SELECT 1 FROM model_calls c WHERE c.run_id = ?1 AND c.unit_id = i.unit_id
              AND c.request_hash = i.custom_id AND c.route = 'live')
"""


class BatchFigureQueries(QueryGroup):
    """Batch figures of one run; `Reader` supplies `_rows`."""

    async def batch_call_spend(self, run_id: str) -> list[BatchCallSpend]:
        """Per stream, model called and route: calls sent, spend, tokens (the report's live/batch split)."""
        return [BatchCallSpend(None if model is None else str(model), None if method is None else str(method),
                               str(called), str(route), int(calls or 0), float(cost or 0.0),
                               *(int(v or 0) for v in tokens))
                for model, method, called, route, calls, cost, *tokens in await self._rows(_BATCH_CALL_SPEND,
                                                                                            (run_id,))]

    async def outstanding_batches(self, run_id: str) -> list[ProviderBatchRow]:
        """The run's batches a provider may still process (and bill): 'submitting' or 'submitted'."""
        return [ProviderBatchRow._make(row) for row in await self._rows(_OUTSTANDING, (run_id,))]

    async def batch_item_outcomes(self, run_id: str) -> list[BatchItemOutcome]:
        """The run's batch items per status (each submission of a request counted once)."""
        return [BatchItemOutcome(str(status), int(n), int(resubmitted or 0))
                for status, n, resubmitted in await self._rows(_ITEM_OUTCOMES, (run_id,))]

    async def batch_rounds(self, run_id: str) -> int:
        """The most batches any one episode's requests were in (0 when none was batched)."""
        rows = await self._rows(_ROUNDS, (run_id,))
        return int(rows[0][0] or 0) if rows else 0

    async def batch_items_sent_live(self, run_id: str) -> int:
        """Requests of the run that failed in a batch and were then sent live."""
        rows = await self._rows(_SENT_LIVE, (run_id,))
        return int(rows[0][0] or 0) if rows else 0


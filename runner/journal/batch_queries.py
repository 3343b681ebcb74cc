"""The named queries of provider batches: what a run spent live and through batch APIs, its batches and
rounds, its items per outcome, and the batches still outstanding (what `runs rm` must cancel).

A mixin of `Reader` (runner.journal.reader), like `CallQueries`. Rows are defined here. A batch item's
`custom_id` is its request's hash, so an item that failed and was then sent live is found as a live
call of the same unit with that `request_hash`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from runner.journal.query_group import QueryGroup

__all__ = ["OUTSTANDING_STATUSES", "BatchCallSpend", "BatchItemOutcome", "BatchQueries", "ProviderBatch"]

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


class ProviderBatch(NamedTuple):
    """A `provider_batches` row as read."""

    label: str
    api: str
    endpoint: str
    model: str
    batch_id: str
    status: str
    items: int
    round: int
    resubmission: bool
    submitted_at: float
    ended_at: float | None
    provider_status: str


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
_BATCH_COLUMNS = """
SELECT label, api, endpoint, model, batch_id, status, items, round, resubmission, submitted_at, ended_at,
       provider_status
FROM provider_batches WHERE run_id = ?"""
_BATCHES = _BATCH_COLUMNS + " ORDER BY round, submitted_at, label"
_OUTSTANDING = (_BATCH_COLUMNS + f" AND status IN ({', '.join(repr(s) for s in OUTSTANDING_STATUSES)})"
                " ORDER BY submitted_at, label")
_ITEM_OUTCOMES = """
SELECT i.status, count(*), sum(b.resubmission != 0)
FROM batch_items i JOIN provider_batches b ON b.run_id = i.run_id AND b.label = i.label
WHERE i.run_id = ? GROUP BY i.status ORDER BY i.status
"""
_SENT_LIVE = """
SELECT count(DISTINCT i.unit_id || ' ' || i.custom_id) FROM batch_items i
WHERE i.run_id = ?1 AND i.status IN ('errored', 'expired', 'canceled')
  AND EXISTS (SELECT 1 FROM model_calls c WHERE c.run_id = ?1 AND c.unit_id = i.unit_id
              AND c.request_hash = i.custom_id AND c.route = 'live')
"""


class BatchQueries(QueryGroup):
    """Batch figures of one run; `Reader` supplies `_rows`."""

    async def batch_call_spend(self, run_id: str) -> list[BatchCallSpend]:
        """Per stream, model called and route: calls sent, spend, tokens (the report's live/batch split)."""
        return [BatchCallSpend(None if model is None else str(model), None if method is None else str(method),
                               str(called), str(route), int(calls or 0), float(cost or 0.0),
                               *(int(v or 0) for v in tokens))
                for model, method, called, route, calls, cost, *tokens in await self._rows(_BATCH_CALL_SPEND,
                                                                                            (run_id,))]

    async def provider_batches_of_run(self, run_id: str) -> list[ProviderBatch]:
        """Every batch the run sent, by round."""
        return [_batch(row) for row in await self._rows(_BATCHES, (run_id,))]

    async def outstanding_batches(self, run_id: str) -> list[ProviderBatch]:
        """The run's batches a provider may still process (and bill): 'submitting' or 'submitted'."""
        return [_batch(row) for row in await self._rows(_OUTSTANDING, (run_id,))]

    async def batch_item_outcomes(self, run_id: str) -> list[BatchItemOutcome]:
        """The run's batch items per status (each submission of a request counted once)."""
        return [BatchItemOutcome(str(status), int(n), int(resubmitted or 0))
                for status, n, resubmitted in await self._rows(_ITEM_OUTCOMES, (run_id,))]

    async def batch_items_sent_live(self, run_id: str) -> int:
        """Requests of the run that failed in a batch and were then sent live."""
        rows = await self._rows(_SENT_LIVE, (run_id,))
        return int(rows[0][0] or 0) if rows else 0


def _batch(row: tuple[Any, ...]) -> ProviderBatch:
    label, api, endpoint, model, batch_id, status, items, rnd, resubmission, submitted, ended, provider = row
    return ProviderBatch(str(label), str(api), str(endpoint), str(model), str(batch_id), str(status),
                         int(items), int(rnd), bool(resubmission), float(submitted),
                         None if ended is None else float(ended), str(provider))

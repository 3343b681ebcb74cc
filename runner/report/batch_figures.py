"""A report's batch figures (`Report.batch`), read from the journal's batch tables and model calls.

None for a run that batched nothing (no provider batch, no call answered through one), so a live run's
report is exactly what it was before batching existed. Money is `runner.cost.batch_savings`'s; here the
batches are counted: rounds, turnaround, items per outcome, and the batches still outstanding.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.config.prices import PriceTable
from runner.cost.batch_savings import batch_spend_by_stream, batch_spend_total, unpriced_batched
from runner.journal import Reader
from runner.journal.batch_journal import ProviderBatchRow
from runner.journal.batch_queries import OUTSTANDING_STATUSES, BatchCallSpend, BatchItemOutcome
from runner.report.model import BATCH_OUTCOMES, BatchFigures, StreamBatch, percentile

__all__ = ["assemble_batch_figures", "batch_figures"]

_FAILED = ("errored", "expired", "canceled")


async def batch_figures(reader: Reader, run_id: str, prices: PriceTable) -> BatchFigures | None:
    """The run's batch figures, or None when it batched nothing."""
    batches = await reader.provider_batches(run_id)
    calls = await reader.batch_call_spend(run_id)
    if not batches and not any(c.route == "batch" for c in calls):
        return None
    return assemble_batch_figures(calls, batches, await reader.batch_item_outcomes(run_id),
                                  await reader.batch_items_sent_live(run_id), await reader.batch_rounds(run_id),
                                  prices)


def assemble_batch_figures(calls: Sequence[BatchCallSpend], batches: Sequence[ProviderBatchRow],
                           outcomes: Sequence[BatchItemOutcome], sent_live: int, rounds: int,
                           prices: PriceTable) -> BatchFigures:
    items = dict.fromkeys(BATCH_OUTCOMES, 0)
    for outcome in outcomes:
        if outcome.status in items:
            items[outcome.status] += outcome.items
        items["resubmitted"] += outcome.resubmitted
    items["sent_live"] = sent_live
    turnaround = [b.ended_at - b.submitted_at for b in batches if b.ended_at is not None]
    by_stream = batch_spend_by_stream(calls, prices)
    return BatchFigures(
        spend=batch_spend_total(calls, prices),
        streams=[StreamBatch(model, method, spend) for (model, method), spend in sorted(by_stream.items())],
        batches=len(batches), rounds=rounds, items=items,
        outstanding=[f"{b.api} {b.batch_id or b.label} ({b.status})" for b in batches
                     if b.status in OUTSTANDING_STATUSES],
        turnaround_p50_s=percentile(turnaround, 50), turnaround_max_s=max(turnaround, default=None),
        unpriced=unpriced_batched(calls, prices))


def failed_items(figures: BatchFigures) -> int:
    """Submissions that came back without an answer (errored, expired or canceled)."""
    return sum(figures.items[status] for status in _FAILED)

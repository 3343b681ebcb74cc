"""The report's batch figures (`Report.batch`) as heading lines and tables, shared by the text, Markdown
and HTML renderers. A run that batched nothing gets neither: its report reads as it always did."""

from __future__ import annotations

from runner.cost.batch_savings import BatchSpend
from runner.report.model import BATCH_OUTCOMES, BatchFigures, Report
from runner.report.sections import Table

__all__ = ["BATCH_ITEMS_TITLE", "BATCH_SPEND_TITLE", "batch_item_table", "batch_lines", "batch_sections",
           "batch_spend_table"]

BATCH_SPEND_TITLE = ("Batch API (test calls answered through the provider's batch API, at its batch price; "
                     "saved = the batch calls' tokens at the live price minus what they cost)")
BATCH_ITEMS_TITLE = ("Batch items (each submission of a request: succeeded, resubmitted once in a later batch, "
                     "sent live after failing, errored, expired, canceled, still pending)")
_ITEM_NAMES = {"sent_live": "sent live"}


def batch_sections(report: Report) -> list[tuple[str, Table, str]]:
    if report.batch is None:
        return []
    return [(BATCH_SPEND_TITLE, batch_spend_table(report.batch), "llrrrrr"),
            (BATCH_ITEMS_TITLE, batch_item_table(report.batch), "r" * len(BATCH_OUTCOMES))]


def batch_lines(report: Report) -> list[str]:
    """For the heading: live and batch spend, the saving, the rounds, and any batch still outstanding."""
    b = report.batch
    if b is None:
        return []
    s = b.spend
    turnaround = ("" if b.turnaround_p50_s is None else
                  f"; turnaround p50 {b.turnaround_p50_s:.0f} s, max {b.turnaround_max_s or 0.0:.0f} s")
    lines = [f"batch: live ${s.live_usd:.4f}, batch ${s.batch_usd:.4f} ({s.batch_calls:,} calls), batching saved "
             f"${s.saved_usd:.4f}; {b.batches} batches in {b.rounds} rounds{turnaround}"]
    if b.unpriced:
        lines.append(f"batch: no live or no batch price for {', '.join(b.unpriced)}, so its saving is not counted")
    if b.outstanding:
        lines.append(f"batch: {len(b.outstanding)} OUTSTANDING, the provider may still process and bill them "
                     f"(`shiftbench resume` collects them; `runs rm` cancels them): {', '.join(b.outstanding[:3])}"
                     + (" ..." if len(b.outstanding) > 3 else ""))
    return lines


def _spend_row(model: str, method: str, s: BatchSpend) -> list[str]:
    return [model, method, f"{s.live_usd:.4f}", f"{s.batch_usd:.4f}", f"{s.live_usd + s.batch_usd:.4f}",
            f"{s.saved_usd:.4f}", f"{s.batch_calls:,}"]


def batch_spend_table(b: BatchFigures) -> Table:
    headers = ["model", "method", "live $", "batch $", "total $", "saved $", "batch calls"]
    rows = [_spend_row(s.model, s.method, s.spend) for s in b.streams]
    return headers, [*rows, _spend_row("(run)", "all calls", b.spend)]


def batch_item_table(b: BatchFigures) -> Table:
    return ([_ITEM_NAMES.get(name, name) for name in BATCH_OUTCOMES],
            [[f"{b.items[name]:,}" for name in BATCH_OUTCOMES]])

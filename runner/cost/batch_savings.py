"""What batching did for a run's money: spend live and through batch APIs, and what batching saved.

Saved = the batch calls' tokens priced at the live rates of the run's table (its sweep file's overrides
over the shipped one) minus what those calls were charged (their batch price). A replayed answer sent
nothing, so its tokens count for neither. A batched model with no live price in the table, or no batch
price (`--allow-unpriced` ran its batched calls unpriced), has no saving to compute: it is named instead
(`unpriced`), never counted as $0 saved or as its whole live price saved. The report reads these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from runner.config.prices import Price
from runner.cost.pricing import cost_usd
from runner.cost.stream_sums import StreamKey, sum_by_stream, sum_total
from runner.journal.batch_queries import BatchCallSpend
from simulators.model_api import Usage

__all__ = ["BatchSpend", "batch_spend_by_stream", "batch_spend_total", "unpriced_batched"]

@dataclass(frozen=True)
class BatchSpend:
    live_usd: float = 0.0
    """Spend of the calls answered live (serving, methods, probes, and test calls sent live)."""
    batch_usd: float = 0.0
    """Spend of the calls answered through a provider's batch API, at its batch price."""
    saved_usd: float = 0.0
    """The batch calls' tokens at the live price minus `batch_usd`."""
    batch_calls: int = 0
    live_calls: int = 0

    def __add__(self, other: BatchSpend) -> BatchSpend:
        return BatchSpend(self.live_usd + other.live_usd, self.batch_usd + other.batch_usd,
                          self.saved_usd + other.saved_usd, self.batch_calls + other.batch_calls,
                          self.live_calls + other.live_calls)


def _spend(row: BatchCallSpend, prices: Mapping[str, Price]) -> BatchSpend:
    if row.route != "batch":
        return BatchSpend(live_usd=row.cost_usd, live_calls=row.calls)
    live = prices.get(row.called)
    usage = Usage(row.input_tokens, row.cached_input_tokens, row.cache_write_tokens, row.output_tokens,
                  cache_write_1h_tokens=row.cache_write_1h_tokens)
    # A model with no batch tier ran its batched calls unpriced (--allow-unpriced): they cost nothing, and
    # pricing their tokens live would count the whole live price as saved.
    at_live = cost_usd(usage, live) if live is not None and live.batch is not None else row.cost_usd
    return BatchSpend(batch_usd=row.cost_usd, saved_usd=at_live - row.cost_usd, batch_calls=row.calls)


def batch_spend_by_stream(rows: Iterable[BatchCallSpend], prices: Mapping[str, Price]) -> dict[StreamKey, BatchSpend]:
    """Per (model, method) stream: every call made for it, each priced at the model it called."""
    return sum_by_stream(rows, lambda row: _spend(row, prices), BatchSpend())


def batch_spend_total(rows: Iterable[BatchCallSpend], prices: Mapping[str, Price]) -> BatchSpend:
    """The whole run, probes and calls no stream claims included."""
    return sum_total(rows, lambda row: _spend(row, prices), BatchSpend())


def unpriced_batched(rows: Iterable[BatchCallSpend], prices: Mapping[str, Price]) -> list[str]:
    """Models called through a batch API with no live price to measure the saving against, or no batch
    price (their batched calls unpriced)."""
    def lacking(name: str) -> bool:
        price = prices.get(name)
        return price is None or price.batch is None
    return sorted({row.called for row in rows if row.route == "batch" and lacking(row.called)})

"""What prompt caching did for a run: the hit rate, the tokens written to the cache, the spend it saved.

Hit rate = cached input tokens / all input tokens of the calls sent (a replayed answer sent nothing).
Saved = what the same tokens would cost with no cache (every prompt token at the plain input rate) minus
what the price table bills them (reads and writes at their own rates), priced with the run's own table
(its sweep file's overrides over the shipped one). Negative when writes cost more than reads saved: a
prefix written and never read again. The report, `runs` and the pilot's projection all use these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import orjson

from runner.config.prices import Price, PriceTable
from runner.cost.pricing import default_prices, saved_usd, with_overrides
from runner.cost.stream_sums import StreamKey, sum_by_stream, sum_total
from runner.journal import CacheUsage
from simulators.errors import ShiftbenchInputError
from simulators.model_api import Usage

__all__ = ["CacheFigures", "cache_by_stream", "cache_total", "run_price_table"]

@dataclass(frozen=True)
class CacheFigures:
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    saved_usd: float = 0.0
    hit_rate: float | None = field(init=False, default=None)
    """Cached / all input tokens; None when nothing was sent. A field, so a report's JSON carries it."""

    def __post_init__(self) -> None:
        rate = self.cached_input_tokens / self.input_tokens if self.input_tokens else None
        object.__setattr__(self, "hit_rate", rate)

    def __add__(self, other: CacheFigures) -> CacheFigures:
        return CacheFigures(self.input_tokens + other.input_tokens,
                            self.cached_input_tokens + other.cached_input_tokens,
                            self.cache_write_tokens + other.cache_write_tokens, self.saved_usd + other.saved_usd)


def _figures(row: CacheUsage, prices: Mapping[str, Price]) -> CacheFigures:
    usage = Usage(row.input_tokens, row.cached_input_tokens, row.cache_write_tokens, row.output_tokens,
                  cache_write_1h_tokens=row.cache_write_1h_tokens)
    return CacheFigures(row.input_tokens, row.cached_input_tokens, row.cache_write_tokens,
                        saved_usd(usage, prices.get(row.model)))


def cache_by_stream(rows: Iterable[CacheUsage], prices: Mapping[str, Price]) -> dict[StreamKey, CacheFigures]:
    """Per (model, method) stream: every call made for it, each priced at the model it called."""
    return sum_by_stream(rows, lambda row: _figures(row, prices), CacheFigures())


def cache_total(rows: Iterable[CacheUsage], prices: Mapping[str, Price]) -> CacheFigures:
    """The whole run, probes and calls no stream claims included."""
    return sum_total(rows, lambda row: _figures(row, prices), CacheFigures())


def run_price_table(config_json: str) -> PriceTable:
    """The table the run priced its calls with: its sweep file's `prices` over the shipped table (the
    shipped table alone for a config this version cannot read)."""
    try:
        config = orjson.loads(config_json)
    except orjson.JSONDecodeError:
        return default_prices()
    overrides = config.get("prices") if isinstance(config, dict) else None
    if not isinstance(overrides, dict) or not overrides:
        return default_prices()
    try:
        return with_overrides(overrides, "the run's [prices]")
    except ShiftbenchInputError:
        return default_prices()

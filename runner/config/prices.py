"""The `[prices."<model>"]` tables a sweep file or a price table file may give: their schema, and their
parse into `Price` values (USD per million tokens), every rate checked where it enters. What a call
then costs, and the table shipped with the package, are `runner.cost.pricing`'s.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulators.errors import ShiftbenchInputError

__all__ = ["OPTIONAL_PRICE_FIELDS", "PRICE_FIELDS", "Price", "PriceTable", "load_prices", "parse_model_prices",
           "parse_price_text", "parse_prices"]

PRICE_FIELDS = ("input", "cached_input", "cache_write", "output")
OPTIONAL_PRICE_FIELDS = ("cache_write_1h", "batch")
"""`cache_write_1h` defaults to `cache_write`: only Anthropic bills 1-hour cache writes apart. `batch` is a
sub-table of the same fields: the price of a call answered through the provider's batch API."""

@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cached_input: float
    cache_write: float
    output: float
    cache_write_1h: float | None = None
    """Anthropic's 1-hour cache write; None: the same as `cache_write` (every other provider)."""
    batch: Price | None = None
    """What a call answered through the provider's batch API costs (OpenAI's and Anthropic's are half of
    every rate, cache reads and writes included); None: the model has no batch price known, so a run
    cannot batch it without one."""

    @property
    def one_hour_write(self) -> float:
        return self.cache_write if self.cache_write_1h is None else self.cache_write_1h

    @property
    def prompt_ceiling(self) -> float:
        """The highest rate any one prompt token can be billed at (a cache write may cost more than input)."""
        return max(self.input, self.cached_input, self.cache_write, self.one_hour_write)


PriceTable = Mapping[str, Price]


def load_prices(path: Path) -> dict[str, Price]:
    """A price table file: `[prices."<model>"]` tables, nothing else."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ShiftbenchInputError(f"{path}: cannot read the price table ({exc.strerror})") from exc
    return parse_price_text(text, str(path))


def parse_price_text(text: str, source: str) -> dict[str, Price]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ShiftbenchInputError(f"{source}: not valid TOML ({exc})") from exc
    return parse_prices(raw, source)


def parse_prices(raw: Mapping[str, Any], source: str) -> dict[str, Price]:
    """A parsed price table file; `source` names it in errors."""
    extra = sorted(set(raw) - {"prices"})
    if extra:
        raise ShiftbenchInputError(f"{source}: unknown key '{extra[0]}'; a price table holds only "
                                   '[prices."<model>"] tables')
    return parse_model_prices(raw.get("prices", {}), source)


def parse_model_prices(models: object, source: str) -> dict[str, Price]:
    if not isinstance(models, Mapping):
        raise ShiftbenchInputError(f'{source}: prices must be a table of [prices."<model>"] tables')
    return {str(name): _parse_price(source, str(name), value) for name, value in models.items()}


def _parse_price(source: str, model: str, value: object, tier: str = "") -> Price:
    where = f'{source}: [prices."{model}"{tier}]'
    if not model:
        raise ShiftbenchInputError(f"{where}: the model name is empty")
    if not isinstance(value, Mapping):
        raise ShiftbenchInputError(f"{where}: must be a table with {', '.join(PRICE_FIELDS)}")
    optional = OPTIONAL_PRICE_FIELDS if not tier else ("cache_write_1h",)  # no batch tier of a batch tier
    known = PRICE_FIELDS + optional
    for key in value:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ShiftbenchInputError(f"{where}: unknown key '{key}'{hint}; expected {', '.join(PRICE_FIELDS)} "
                                       f"(and optionally {', '.join(optional)})")
    missing = [name for name in PRICE_FIELDS if name not in value]
    if missing:
        raise ShiftbenchInputError(f"{where}: missing {', '.join(missing)} (USD per million tokens)")
    one_hour = _rate(where, "cache_write_1h", value["cache_write_1h"]) if "cache_write_1h" in value else None
    rates = [_rate(where, name, value[name]) for name in PRICE_FIELDS]
    batch = _parse_price(source, model, value["batch"], ".batch") if "batch" in value else None
    return Price(rates[0], rates[1], rates[2], rates[3], cache_write_1h=one_hour, batch=batch)


def _rate(where: str, name: str, value: object) -> float:
    # bool is an int to Python, never a price.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ShiftbenchInputError(f"{where}: {name} must be a number (USD per million tokens), got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ShiftbenchInputError(f"{where}: {name} must be a finite number >= 0, got {value}")
    return float(value)

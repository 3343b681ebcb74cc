"""What model calls cost: the price table, its overrides, a call's cost, a call's worst case.

Prices are USD per million tokens. The default table ships inside the package (`runner/prices.toml`;
`data/prices.toml` links to it for readers of the repository) so an installed shiftbench finds it too.
A sweep file overrides it model by model with `[prices."<model>"]` tables of the same shape.

Usage convention (what a provider client must report): `input_tokens` counts every prompt token;
`cached_input_tokens` (read from the provider's prompt cache) and `cache_write_tokens` (written to it)
are parts of that count, each billed at its own rate, and the rest is billed at the input rate. Of the
writes, `cache_write_1h_tokens` went to Anthropic's 1-hour cache (`cache_write_1h`, 2 x input); the
others are 5-minute writes (`cache_write`, 1.25 x input).
"""

from __future__ import annotations

import difflib
import functools
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelRequest, Usage

__all__ = [
    "FRAMING_TOKENS_PER_ITEM",
    "FRAMING_TOKENS_PER_REQUEST",
    "OPTIONAL_PRICE_FIELDS",
    "PRICE_FIELDS",
    "Price",
    "PriceTable",
    "cost_usd",
    "default_prices",
    "load_prices",
    "parse_prices",
    "price_of",
    "prompt_token_bound",
    "saved_usd",
    "uncached_usd",
    "unpriced",
    "with_overrides",
    "worst_case_usd",
]

PRICE_FIELDS = ("input", "cached_input", "cache_write", "output")
OPTIONAL_PRICE_FIELDS = ("cache_write_1h",)
"""`cache_write_1h` defaults to `cache_write`: only Anthropic bills 1-hour cache writes apart."""
_PER_MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cached_input: float
    cache_write: float
    output: float
    cache_write_1h: float | None = None
    """Anthropic's 1-hour cache write; None: the same as `cache_write` (every other provider)."""

    @property
    def one_hour_write(self) -> float:
        return self.cache_write if self.cache_write_1h is None else self.cache_write_1h

    @property
    def prompt_ceiling(self) -> float:
        """The highest rate any one prompt token can be billed at (a cache write may cost more than input)."""
        return max(self.input, self.cached_input, self.cache_write, self.one_hour_write)


PriceTable = Mapping[str, Price]


# --- cost -------------------------------------------------------------------------------------------

def cost_usd(usage: Usage, price: Price | None) -> float:
    """The cost of a call's usage. A cost the provider reported wins over the table: it is the bill.
    Without either (an unpriced model the user allowed) the call is counted at 0."""
    if usage.reported_cost_usd is not None:
        return usage.reported_cost_usd
    if price is None:
        return 0.0
    # Floored at 0 so a client that reports cache tokens outside input_tokens is under-, never negatively, billed.
    fresh = max(0, usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens)
    one_hour = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
    micro = (fresh * price.input + usage.cached_input_tokens * price.cached_input
             + (usage.cache_write_tokens - one_hour) * price.cache_write + one_hour * price.one_hour_write
             + usage.output_tokens * price.output)
    return micro / _PER_MILLION


def uncached_usd(usage: Usage, price: Price | None) -> float:
    """What `usage` would cost with no prompt cache: every prompt token at the plain input rate."""
    if price is None:
        return 0.0
    return (usage.input_tokens * price.input + usage.output_tokens * price.output) / _PER_MILLION


def saved_usd(usage: Usage, price: Price | None) -> float:
    """What prompt caching saved on `usage` at the table's rates: the same tokens uncached minus what the
    table bills them (a cost the provider reported is left out: the saving is the tokens' own). Negative
    when cache writes cost more than the reads saved."""
    return uncached_usd(usage, price) - cost_usd(replace(usage, reported_cost_usd=None), price)


# --- worst case -------------------------------------------------------------------------------------

FRAMING_TOKENS_PER_ITEM = 16
"""Tokens a chat template may add around each message, tool-call and tool definition (role markers,
separators, ids): never in the serialized text, so allowed for separately."""

FRAMING_TOKENS_PER_REQUEST = 1024
"""Tokens a provider may add once per request: a tool-use system prompt (Anthropic documents a few
hundred tokens for it) and the priming of the reply."""


def prompt_token_bound(request: ModelRequest) -> int:
    """An upper bound of the prompt tokens a request is billed for.

    A token never covers less than one byte of text, so the UTF-8 length of the serialized request
    (system, messages with their reasoning, tool calls and provider state, tools) bounds the tokens of
    its text; JSON quoting only adds bytes. The framing allowances cover what the provider adds."""
    payload = orjson.dumps({"system": request.full_system, "messages": request.messages, "tools": request.tools},
                           default=_plain)
    items = 1 + len(request.messages) + len(request.tools) + sum(len(m.tool_calls) for m in request.messages)
    return len(payload) + FRAMING_TOKENS_PER_REQUEST + FRAMING_TOKENS_PER_ITEM * items


def _plain(value: object) -> object:
    # orjson serializes dicts and dataclasses natively but not other Mappings (tool schemas may be one).
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot serialize {type(value).__name__}")


_ROUNDING_MARGIN = 1 + 1e-9
"""The actual cost is summed in another order than the bound; a part per billion keeps float rounding
from ever putting it above the bound."""


def worst_case_usd(request: ModelRequest, price: Price | None, attempts: int = 1) -> float:
    """The most `request` can cost over `attempts` attempts: every prompt token at the dearest prompt
    rate and every allowed output token, each attempt. An unpriced model has no bound: 0."""
    if price is None:
        return 0.0
    micro = prompt_token_bound(request) * price.prompt_ceiling + request.max_output_tokens * price.output
    return attempts * micro / _PER_MILLION * _ROUNDING_MARGIN


# --- the table --------------------------------------------------------------------------------------

@functools.cache
def default_prices() -> PriceTable:
    """The table shipped with the package, read once and shared read-only."""
    resource = resources.files("runner").joinpath("prices.toml")
    return MappingProxyType(_parse_text(resource.read_text(encoding="utf-8"), str(resource)))


def load_prices(path: Path) -> dict[str, Price]:
    """A price table file: `[prices."<model>"]` tables, nothing else."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ShiftbenchInputError(f"{path}: cannot read the price table ({exc.strerror})") from exc
    return _parse_text(text, str(path))


def _parse_text(text: str, source: str) -> dict[str, Price]:
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
    return _parse_models(raw.get("prices", {}), source)


def with_overrides(overrides: Mapping[str, Any], source: str, table: PriceTable | None = None) -> dict[str, Price]:
    """`table` (the defaults when None) with a sweep file's `prices` table merged over it. Each model
    given replaces its default entry whole, so all four fields are required there too."""
    base = default_prices() if table is None else table
    return {**base, **_parse_models(overrides, source)}


def _parse_models(models: object, source: str) -> dict[str, Price]:
    if not isinstance(models, Mapping):
        raise ShiftbenchInputError(f'{source}: prices must be a table of [prices."<model>"] tables')
    return {str(name): _parse_price(source, str(name), value) for name, value in models.items()}


def _parse_price(source: str, model: str, value: object) -> Price:
    where = f'{source}: [prices."{model}"]'
    if not model:
        raise ShiftbenchInputError(f"{where}: the model name is empty")
    if not isinstance(value, Mapping):
        raise ShiftbenchInputError(f"{where}: must be a table with {', '.join(PRICE_FIELDS)}")
    known = PRICE_FIELDS + OPTIONAL_PRICE_FIELDS
    for key in value:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ShiftbenchInputError(f"{where}: unknown key '{key}'{hint}; expected {', '.join(PRICE_FIELDS)} "
                                       f"(and optionally {', '.join(OPTIONAL_PRICE_FIELDS)})")
    missing = [name for name in PRICE_FIELDS if name not in value]
    if missing:
        raise ShiftbenchInputError(f"{where}: missing {', '.join(missing)} (USD per million tokens)")
    one_hour = _rate(where, "cache_write_1h", value["cache_write_1h"]) if "cache_write_1h" in value else None
    rates = [_rate(where, name, value[name]) for name in PRICE_FIELDS]
    return Price(rates[0], rates[1], rates[2], rates[3], cache_write_1h=one_hour)


def _rate(where: str, name: str, value: object) -> float:
    # bool is an int to Python, never a price.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ShiftbenchInputError(f"{where}: {name} must be a number (USD per million tokens), got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ShiftbenchInputError(f"{where}: {name} must be a finite number >= 0, got {value}")
    return float(value)


def price_of(model: str, table: PriceTable | None = None) -> Price | None:
    """The price of `model` in `table` (the defaults when None); None when it has none."""
    return (default_prices() if table is None else table).get(model)


def unpriced(models: Iterable[str], table: PriceTable | None = None) -> list[str]:
    """The models without a price, in the order given: a paid run refuses them unless allowed."""
    prices = default_prices() if table is None else table
    return [model for model in models if model not in prices]

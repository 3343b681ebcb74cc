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

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from importlib import resources
from typing import Any

import orjson

from runner.config.prices import Price, PriceTable, parse_model_prices, parse_price_text
from simulators.model_api import ModelRequest, Usage

__all__ = ["FRAMING_TOKENS_PER_ITEM", "FRAMING_TOKENS_PER_REQUEST", "OFFLINE_PRICE", "cost_usd", "default_prices",
           "is_offline_model", "price_of",
           "prompt_token_bound", "saved_usd", "uncached_usd", "unpriced", "with_overrides", "worst_case_usd"]

_PER_MILLION = 1_000_000


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

OFFLINE_PRICE = Price(input=0.0, cached_input=0.0, cache_write=0.0, output=0.0)
"""What an offline scripted model costs: nothing, whatever its variant or parameter."""


def is_offline_model(model: str) -> bool:
    """`scripted` and every `scripted:<variant>[=P]`: models that run in this process and bill nothing."""
    return model == "scripted" or model.startswith("scripted:")


class _Table(Mapping[str, Price]):
    """A read-only price table that also prices every offline scripted model at $0. The variants are
    open-ended (`scripted:noisy=0.3`), so no list of entries could name them all; without this, a pilot
    of one called it unpriced and `estimate` refused it. An explicit entry still wins."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self._prices = dict(prices)

    def __getitem__(self, model: str) -> Price:
        found = self._prices.get(model)
        if found is not None:
            return found
        if is_offline_model(model):
            return OFFLINE_PRICE
        raise KeyError(model)

    def __iter__(self) -> Iterator[str]:
        return iter(self._prices)

    def __len__(self) -> int:
        return len(self._prices)


@functools.cache
def default_prices() -> PriceTable:
    """The table shipped with the package, read once and shared read-only."""
    resource = resources.files("runner").joinpath("prices.toml")
    return _Table(parse_price_text(resource.read_text(encoding="utf-8"), str(resource)))


def with_overrides(overrides: Mapping[str, Any], source: str, table: PriceTable | None = None) -> PriceTable:
    """`table` (the defaults when None) with a sweep file's `prices` table merged over it. Each model
    given replaces its default entry whole, so all four fields are required there too."""
    base = default_prices() if table is None else table
    return _Table({**base, **parse_model_prices(overrides, source)})


def price_of(model: str, table: PriceTable | None = None) -> Price | None:
    """The price of `model` in `table` (the defaults when None); None when it has none."""
    return (default_prices() if table is None else table).get(model)


def unpriced(models: Iterable[str], table: PriceTable | None = None) -> list[str]:
    """The models without a price, in the order given: a paid run refuses them unless allowed."""
    prices = default_prices() if table is None else table
    return [model for model in models if model not in prices]

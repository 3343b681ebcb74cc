"""Prices: the shipped table, overrides from a sweep file, validation, a call's cost and worst case."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import pytest

import runner.config.prices
import runner.cost.pricing
from runner.config.prices import Price, load_prices, parse_prices
from runner.cost.pricing import (
    FRAMING_TOKENS_PER_ITEM,
    FRAMING_TOKENS_PER_REQUEST,
    cost_usd,
    default_prices,
    price_of,
    prompt_token_bound,
    unpriced,
    with_overrides,
    worst_case_usd,
)
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelRequest, Usage
from simulators.protocol import Message, ToolCall

REPO = Path(__file__).resolve().parents[2]
PRICE = Price(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)


def test_public_api() -> None:
    assert runner.cost.pricing.__all__ == [
        "FRAMING_TOKENS_PER_ITEM", "FRAMING_TOKENS_PER_REQUEST", "OFFLINE_PRICE", "cost_usd", "default_prices",
        "is_offline_model", "price_of", "prompt_token_bound", "saved_usd", "uncached_usd", "unpriced",
        "with_overrides", "worst_case_usd",
    ]
    assert runner.config.prices.__all__ == [
        "OPTIONAL_PRICE_FIELDS", "PRICE_FIELDS", "Price", "PriceTable", "load_prices", "parse_model_prices",
        "parse_price_text", "parse_prices",
    ]


def test_cached_and_written_tokens_are_billed_at_their_own_rates() -> None:
    # 1000 prompt tokens: 600 read from the cache, 100 written to it, 300 fresh; 50 output.
    usage = Usage(input_tokens=1000, cached_input_tokens=600, cache_write_tokens=100, output_tokens=50)
    # 300 x 2 + 600 x 0.5 + 100 x 2.5 + 50 x 8 = 1550 micro-dollars
    assert cost_usd(usage, PRICE) == pytest.approx(0.00155, rel=1e-12)


def test_a_cost_the_provider_reported_wins() -> None:
    usage = Usage(input_tokens=1000, output_tokens=50, reported_cost_usd=0.0123)
    assert cost_usd(usage, PRICE) == 0.0123
    assert cost_usd(usage, None) == 0.0123
    assert cost_usd(Usage(input_tokens=1000), None) == 0.0


def test_cache_counts_reported_outside_input_never_bill_negative() -> None:
    usage = Usage(input_tokens=10, cached_input_tokens=100)
    assert cost_usd(usage, PRICE) == pytest.approx(100 * 0.5 / 1e6)


def test_prompt_bound_covers_every_byte_of_text_and_the_framing() -> None:
    text = "é" * 300  # 600 UTF-8 bytes: a token never covers less than one byte
    call = ToolCall("c1", "decide", '{"x": 1}')
    request = ModelRequest(system="sys", messages=(Message("user", text), Message("assistant", tool_calls=(call,))),
                           tools=(MappingProxyType({"type": "function", "function": {"name": "decide"}}),))
    items = 1 + 2 + 1 + 1  # the request, two messages, one tool, one tool call
    assert prompt_token_bound(request) >= 600 + 3 + FRAMING_TOKENS_PER_REQUEST + FRAMING_TOKENS_PER_ITEM * items


def test_worst_case_takes_the_dearest_prompt_rate_and_every_output_token() -> None:
    request = ModelRequest(system="s" * 100, messages=(Message("user", "hi"),), max_output_tokens=1000)
    bound = prompt_token_bound(request)
    # cache_write (2.5) is dearer than input (2.0): a prompt written to the cache costs that much.
    assert worst_case_usd(request, PRICE) == pytest.approx((bound * 2.5 + 1000 * 8.0) / 1e6)
    assert worst_case_usd(request, PRICE, attempts=3) == pytest.approx(3 * (bound * 2.5 + 1000 * 8.0) / 1e6)
    assert worst_case_usd(request, None) == 0.0


def test_default_table_ships_in_the_package_and_data_holds_the_same() -> None:
    packaged = resources.files("runner").joinpath("prices.toml").read_bytes()
    assert (REPO / "data" / "prices.toml").read_bytes() == packaged
    table = default_prices()
    for name in ("scripted", "scripted:oracle", "scripted:docs"):
        assert table[name] == Price(0.0, 0.0, 0.0, 0.0)
    assert all(name.split(":")[0] in {"scripted", "openai", "anthropic", "openrouter"} for name in table)
    assert price_of("openai:gpt-4.1") == Price(2.0, 0.5, 2.0, 8.0, batch=Price(1.0, 1.0, 1.0, 4.0))
    assert price_of("openai:no-such-model") is None


def test_unpriced_lists_models_without_a_price_in_order() -> None:
    table = {"a": PRICE}
    assert unpriced(["x", "a", "y"], table) == ["x", "y"]
    assert unpriced(["scripted", "openai:gpt-5", "local:llama"]) == ["local:llama"]


SWEEP = """
models = ["openai:gpt-4o", "together:new-model"]

[prices."openai:gpt-4o"]
input = 1.0
cached_input = 0.5
cache_write = 1
output = 4.0

[prices."together:new-model"]
input = 0.2
cached_input = 0.2
cache_write = 0.2
output = 0.6
"""


def test_sweep_file_prices_merge_over_the_defaults() -> None:
    table = with_overrides(tomllib.loads(SWEEP)["prices"], "sweep.toml")
    assert table["openai:gpt-4o"] == Price(1.0, 0.5, 1.0, 4.0)
    assert table["together:new-model"] == Price(0.2, 0.2, 0.2, 0.6)
    assert table["openai:gpt-5"] == default_prices()["openai:gpt-5"]
    # the defaults are untouched
    assert default_prices()["openai:gpt-4o"] == Price(2.5, 1.25, 2.5, 10.0, batch=Price(1.25, 1.25, 1.25, 5.0))
    assert unpriced(["together:new-model"], table) == []


@pytest.mark.parametrize(("body", "message"), [
    ("input = 1\ncached_input = 1\ncache_write = 1\noutput = 1\ncahced = 2", r"unknown key 'cahced'"),
    ("input = 1\ncached_input = 1\ncache_writ = 1\noutput = 1",
     r"unknown key 'cache_writ' \(did you mean 'cache_write'\?\)"),
    ("input = 1\ncached_input = 1\ncache_write = 1\noutput = -0.5", r"output must be a finite number >= 0, got -0.5"),
    ("input = 1\noutput = 1", r"missing cached_input, cache_write"),
    ('input = "1"\ncached_input = 1\ncache_write = 1\noutput = 1', r"input must be a number"),
    ("input = true\ncached_input = 1\ncache_write = 1\noutput = 1", r"input must be a number"),
    ("input = nan\ncached_input = 1\ncache_write = 1\noutput = 1", r"input must be a finite number"),
])
def test_bad_prices_name_the_file_and_the_model(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(f'[prices."openai:gpt-x"]\n{body}\n')
    with pytest.raises(ShiftbenchInputError, match=rf'sweep.toml: \[prices."openai:gpt-x"\]: {message}'):
        with_overrides(tomllib.loads(path.read_text())["prices"], str(path))


def test_a_price_that_is_not_a_table_is_refused() -> None:
    with pytest.raises(ShiftbenchInputError, match=r'sweep.toml: \[prices."m"\]: must be a table'):
        with_overrides({"m": 3}, "sweep.toml")
    with pytest.raises(ShiftbenchInputError, match=r"sweep.toml: prices must be a table"):
        with_overrides(["m"], "sweep.toml")  # type: ignore[arg-type]


def test_price_table_files_are_checked_where_they_are_read(tmp_path: Path) -> None:
    with pytest.raises(ShiftbenchInputError, match=r"missing.toml: cannot read the price table"):
        load_prices(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[prices.\n")
    with pytest.raises(ShiftbenchInputError, match=r"broken.toml: not valid TOML"):
        load_prices(broken)
    with pytest.raises(ShiftbenchInputError, match=r"table.toml: unknown key 'models'"):
        parse_prices({"models": {}}, "table.toml")
    good = tmp_path / "good.toml"
    good.write_text('[prices."a"]\ninput = 1\ncached_input = 0.1\ncache_write = 1.25\noutput = 5\n')
    assert load_prices(good) == {"a": Price(1.0, 0.1, 1.25, 5.0)}


def test_one_hour_cache_write_rate_is_optional_and_priced_apart(tmp_path: Path) -> None:
    table = tmp_path / "t.toml"
    rates = "input = 2\ncached_input = 0.2\ncache_write = 2.5\noutput = 10\n"
    table.write_text(f'[prices."a"]\n{rates}cache_write_1h = 4\n[prices."b"]\n{rates}')
    prices = load_prices(table)
    assert prices["a"].one_hour_write == 4.0 and prices["b"].one_hour_write == 2.5  # omitted: cache_write
    assert prices["a"].prompt_ceiling == 4.0  # the worst case counts the dearest write
    usage = Usage(input_tokens=1000, cached_input_tokens=500, cache_write_tokens=300, cache_write_1h_tokens=100,
                  output_tokens=10)
    assert cost_usd(usage, prices["a"]) == pytest.approx((200 * 2 + 500 * 0.2 + 200 * 2.5 + 100 * 4 + 10 * 10) / 1e6)
    hint = r"unknown key 'cache_write_1hr' \(did you mean 'cache_write_1h'\?\)"
    with pytest.raises(ShiftbenchInputError, match=hint):
        parse_prices({"prices": {"c": {"input": 1, "cached_input": 1, "cache_write": 1, "output": 1,
                                       "cache_write_1hr": 2}}}, "t.toml")
    with pytest.raises(ShiftbenchInputError, match=r"cache_write_1h must be a finite number >= 0"):
        parse_prices({"prices": {"c": {"input": 1, "cached_input": 1, "cache_write": 1, "output": 1,
                                       "cache_write_1h": -1}}}, "t.toml")

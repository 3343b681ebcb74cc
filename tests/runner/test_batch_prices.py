"""The shipped batch tier: every OpenAI and Anthropic model has one, at the providers' published rule.

The rule is computed here from the live rates of the raw TOML (not from the parsed tiers), and a few
rates are checked against the providers' published batch figures as literals.
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from runner.cost.pricing import default_prices

RAW = tomllib.loads(resources.files("runner").joinpath("prices.toml").read_text(encoding="utf-8"))["prices"]
BATCHED = sorted(name for name in RAW if name.startswith(("openai:", "anthropic:")))
FIELDS = ("input", "cached_input", "cache_write", "output")


def expected_tier(model: str) -> dict[str, float]:
    """Anthropic: half of every rate (its batch discount stacks with caching). OpenAI: half of input,
    output and (equal to input) cache writes; a cached-input rate half the live one for the GPT-5
    family, none for older models, whose cached tokens are billed at the batch input rate."""
    live = RAW[model]
    tier = {name: live[name] / 2 for name in FIELDS}
    if model.startswith("anthropic:"):
        tier["cache_write_1h"] = live.get("cache_write_1h", live["cache_write"]) / 2
    elif not model.startswith("openai:gpt-5"):
        tier["cached_input"] = live["input"] / 2
    return tier


def test_the_table_batches_both_providers_models() -> None:
    assert len(BATCHED) >= 25
    assert {name.split(":")[0] for name in BATCHED} == {"openai", "anthropic"}


@pytest.mark.parametrize("model", BATCHED)
def test_every_openai_and_anthropic_model_has_its_batch_tier_at_the_published_rule(model: str) -> None:
    tier = default_prices()[model].batch
    assert tier is not None, f"{model} has no [prices.\"{model}\".batch]"
    expected = expected_tier(model)
    for name in FIELDS:
        assert getattr(tier, name) == expected[name], (model, name)
    if "cache_write_1h" in expected:
        assert tier.one_hour_write == expected["cache_write_1h"]
    assert tier.batch is None


def test_published_batch_figures() -> None:
    """A few rates as the providers publish them (USD per million tokens)."""
    table = default_prices()

    def rates(model: str) -> tuple[float, ...]:
        tier = table[model].batch
        assert tier is not None
        return (tier.input, tier.cached_input, tier.cache_write, tier.output, tier.one_hour_write)

    assert rates("openai:gpt-5.4") == (1.25, 0.125, 1.25, 7.50, 1.25)
    assert rates("openai:gpt-5") == (0.625, 0.0625, 0.625, 5.00, 0.625)
    assert rates("openai:gpt-4.1")[:4] == (1.00, 1.00, 1.00, 4.00)
    assert rates("openai:o4-mini")[:4] == (0.55, 0.55, 0.55, 2.20)
    assert rates("anthropic:claude-sonnet-4-6") == (1.50, 0.15, 1.875, 7.50, 3.00)
    assert rates("anthropic:claude-opus-4-8") == (2.50, 0.25, 3.125, 12.50, 5.00)


def test_models_without_a_batch_api_have_no_tier() -> None:
    table = default_prices()
    for name in RAW:
        if not name.startswith(("openai:", "anthropic:")):
            assert table[name].batch is None, name

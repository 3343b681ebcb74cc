"""Prompt caching against the mock's prefix cache: the rolling Anthropic breakpoint makes every turn
after the first read the conversation from cache, priced at the read and write rates; OpenAI's
automatic prefix caching is reported as cached tokens; the mock bills as the providers document."""

from __future__ import annotations

from typing import Any

from bench.mock_cache import PrefixCache
from bench.mock_provider import serve_mock, tool_loop
from runner.config.prices import Price
from runner.cost.pricing import cost_usd
from runner.providers import make_http_client
from simulators.model_api import Usage
from simulators.protocol import Message
from tests.runner.providers.support import anthropic_client, openai_client, request

# Long enough (~2,000 tokens at 4 bytes each) to pass the minimum cacheable prefix of 1,024.
POLICY = "Refunds follow the store policy: check the order, its window and its state. " * 100
PRICE = Price(input=3.0, cached_input=0.30, cache_write=3.75, output=15.0)


def _marks(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(_marks(v) for v in value)
    return 0


async def test_ten_turn_episode_reads_the_conversation_from_cache_and_prices_it() -> None:
    cache = PrefixCache()
    usages: list[Usage] = []
    async with serve_mock(tool_loop(calls_before_finish=9), cache=cache) as mock, make_http_client() as http:
        client = anthropic_client(mock.base_url, http)
        messages = [Message("user", "Refund order 7.")]
        for _ in range(10):
            response = await client.respond(request(*messages, system=POLICY))
            usages.append(response.usage)
            call = response.turn.tool_calls[0]
            messages += [Message("assistant", response.turn.text, tool_calls=(call,)),
                         Message("tool", f"result of {call.name}", tool_call_id=call.id)]
    assert len(mock.requests) == 10 and response.turn.tool_calls[0].name == "finish"
    assert all(_marks(r.body) <= 4 for r in mock.requests)
    # The client reports exactly what the provider billed, call by call.
    assert [(u.input_tokens, u.cached_input_tokens, u.cache_write_tokens) for u in usages] == [
        (b.input_tokens, b.cached_tokens, b.cache_write_tokens) for b in cache.billed]
    first, later = usages[0], usages[1:]
    assert first.cached_input_tokens == 0 and first.cache_write_tokens == first.input_tokens
    read = sum(u.cached_input_tokens for u in later)
    assert read >= 0.8 * sum(u.input_tokens for u in later)
    # Each later turn writes only what it added since the previous mark.
    assert all(u.cache_write_tokens < 100 for u in later)
    hand = sum((b.input_tokens - b.cached_tokens - b.cache_write_tokens) * 3.0 + b.cached_tokens * 0.30
               + b.cache_write_tokens * 3.75 + 20 * 15.0 for b in cache.billed) / 1e6
    priced = sum(cost_usd(u, PRICE) for u in usages)
    assert abs(priced - hand) < 1e-12
    uncached = sum(u.input_tokens * 3.0 + u.output_tokens * 15.0 for u in usages) / 1e6
    assert priced < 0.4 * uncached


async def test_openai_automatic_prefix_caching_is_reported_as_cached_tokens() -> None:
    cache = PrefixCache()
    async with serve_mock(cache=cache) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http)
        first = await client.respond(request(system=POLICY))
        second = await client.respond(request(system=POLICY))
        short = await client.respond(request(system="Be brief."))
    assert first.usage.cached_input_tokens == 0
    cached = second.usage.cached_input_tokens
    assert cached >= 1024 and (cached - 1024) % 128 == 0 and cached <= second.usage.input_tokens
    assert short.usage.cached_input_tokens == 0  # a different prefix from the first block on
    assert "prompt_tokens_details" not in mock.requests[0].body


def test_mock_refuses_a_fifth_breakpoint_and_caches_nothing_below_the_minimum() -> None:
    cache = PrefixCache(anthropic_min_prefix=1024)
    marked = {"type": "text", "text": "x" * 40, "cache_control": {"type": "ephemeral"}}
    five = {"messages": [{"role": "user", "content": [dict(marked) for _ in range(5)]}]}
    assert isinstance(cache.bill(five, anthropic=True), str)
    small = {"system": [marked], "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(2):
        billed = cache.bill(small, anthropic=True)
        assert not isinstance(billed, str)
        assert (billed.cached_tokens, billed.cache_write_tokens) == (0, 0)

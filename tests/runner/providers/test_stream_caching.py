"""Prompt caching across a stream's episodes, against the mock's prefix cache: the request laid out
stable parts first (tools, system prompt, the method's context, then the task), the method's context as
its own Anthropic breakpoint, the cache TTL chosen per stream, 5-minute and 1-hour writes priced apart,
and OpenAI's `prompt_cache_key` per stream where the endpoint accepts it."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest

from bench.mock_cache import PrefixCache
from bench.mock_provider import Recorded, serve_mock, tool_loop
from bench.mock_quirks import MODES, with_quirks
from runner.config.prices import Price
from runner.cost.pricing import cost_usd, default_prices
from runner.models.registry import build_model
from runner.models.scoped import CacheScopedModel, cache_scope
from runner.providers import make_http_client
from runner.providers.anthropic import MAX_BREAKPOINTS, anthropic_usage
from runner.providers.prompt_cache import SLOW_GAP_S, StreamCadence, prompt_cache_key
from runner.providers.taxonomy import InfrastructureError
from runner.schedule.episode import EpisodeResult, run_episode
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelClient
from tests.fakes import ToyDomain, toy_scenario
from tests.runner.providers.support import KEY, anthropic_client, openai_client

SCENARIO = toy_scenario()
# Long enough (~2,000 and ~1,500 tokens at 4 bytes each) for the minimum cacheable prefix of 1,024.
ENVIRONMENT = dataclasses.replace(
    SCENARIO.environment,
    system_prompt="Refunds follow the store policy: check the order, its window and its state. " * 100)
CONTEXT = "## Lessons learned\n" + "- Refuse refunds past the 30-day window unless the item is faulty.\n" * 90
STREAM = "claude-test|lessons|retail_l1"
PRICE = Price(input=3.0, cached_input=0.30, cache_write=3.75, output=15.0, cache_write_1h=6.0)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def marks(value: Any) -> list[dict[str, Any]]:
    """Every `cache_control` value in a body, in order."""
    if isinstance(value, dict):
        own = [value["cache_control"]] if "cache_control" in value else []
        return own + [m for v in value.values() for m in marks(v)]
    if isinstance(value, list):
        return [m for v in value for m in marks(v)]
    return []


def common_prefix(a: bytes, b: bytes) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


async def episode(model: ModelClient, task_index: int, context: str = CONTEXT) -> EpisodeResult:
    return await run_episode(SCENARIO.serving[task_index], ENVIRONMENT, ToyDomain(), model, context)


def bodies_of_first_turns(requests: list[Recorded]) -> list[Recorded]:
    return [r for r in requests if r.tool_results() == 0]


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
async def test_prefix_up_to_the_method_context_is_byte_identical_across_a_streams_episodes(dialect: str) -> None:
    async with serve_mock(tool_loop(calls_before_finish=2), cache=PrefixCache()) as mock, \
            make_http_client() as http:
        client = anthropic_client(mock.base_url, http) if dialect == "anthropic" else openai_client(mock.base_url, http)
        model = CacheScopedModel(client, cache_scope(STREAM, "agent"))
        await episode(model, 0)
        await episode(model, 1)
    first, second = (r.raw for r in bodies_of_first_turns(mock.requests))
    context_end = first.index(orjson.dumps(CONTEXT.strip())[1:-1]) + len(orjson.dumps(CONTEXT.strip())) - 2
    task = orjson.dumps(SCENARIO.serving[0].instruction)[1:-1]
    # Tools, system prompt and the method's context come first, byte for byte the same; then the task.
    assert first.index(b'"tools"') < first.index(orjson.dumps(ENVIRONMENT.system_prompt)[1:40]) < context_end
    assert common_prefix(first, second) >= context_end
    assert first.index(task) > context_end
    # So the second episode reads that whole prefix from the provider's cache.
    assert mock.cache is not None
    second_billed = mock.cache.billed[len(mock.requests) // 2]
    assert second_billed.cached_tokens >= (len(ENVIRONMENT.system_prompt) + len(CONTEXT)) // 4 - 64


async def test_anthropic_marks_the_method_context_and_never_sends_more_than_four_breakpoints() -> None:
    async with serve_mock(tool_loop(calls_before_finish=3), cache=PrefixCache()) as mock, \
            make_http_client() as http:
        model = CacheScopedModel(anthropic_client(mock.base_url, http), cache_scope(STREAM, "agent"))
        await episode(model, 0)
        await episode(model, 1, context="")  # blind: no context block, one mark fewer
    for recorded in mock.requests:
        body = recorded.body
        assert len(marks(body)) <= MAX_BREAKPOINTS
        assert all(m == {"type": "ephemeral"} for m in marks(body))
        assert list(body)[:4] == ["model", "tools", "system", "messages"]
        assert all(set(block) == {"type", "text", "cache_control"} and block["type"] == "text"
                   for block in body["system"])
    with_context, without = mock.requests[0].body, mock.requests[-1].body
    assert [b["text"] for b in with_context["system"]] == [ENVIRONMENT.system_prompt, CONTEXT.strip()]
    assert len(marks(with_context)) == 4 and len(marks(without)) == 3


async def test_ten_turn_episode_reads_its_prefix_from_cache_and_is_priced_by_write_ttl() -> None:
    """A stream whose episodes come more than 4 minutes apart switches to 1-hour marks; the bill
    (5-minute writes, 1-hour writes, reads, fresh input, output) is exactly the hand computation."""
    cache, clock = PrefixCache(), Clock()
    async with serve_mock(tool_loop(calls_before_finish=9), cache=cache) as mock, make_http_client() as http:
        client = anthropic_client(mock.base_url, http, cadence=StreamCadence(clock=clock))
        model = CacheScopedModel(client, cache_scope(STREAM, "agent"))
        first = await episode(model, 0)
        clock.now += SLOW_GAP_S + 60  # learning calls, or a slow shared model, between two episodes
        second = await episode(model, 1)
    assert first.turns == second.turns == 10
    ttls = [[m.get("ttl", "5m") for m in marks(r.body)] for r in mock.requests]
    assert all(t == ["5m"] * 4 for t in ttls[:10]) and all(t == ["1h"] * 4 for t in ttls[10:])
    # Within an episode, every turn after the first reads the conversation so far from cache.
    billed = cache.billed
    later = billed[1:10]
    assert sum(b.cached_tokens for b in later) >= 0.8 * sum(b.input_tokens for b in later)
    # The second episode reads tools, system and context; what it writes goes to the 1-hour cache.
    assert billed[10].cached_tokens > 0.9 * billed[0].input_tokens - 64
    assert billed[0].cache_write_1h_tokens == 0 and billed[0].cache_write_tokens > 0
    assert all(b.cache_write_1h_tokens == b.cache_write_tokens > 0 for b in billed[10:])
    usage = first.usage + second.usage
    assert (usage.cached_input_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens) == (
        sum(b.cached_tokens for b in billed), sum(b.cache_write_tokens for b in billed),
        sum(b.cache_write_1h_tokens for b in billed))
    hand = sum((b.input_tokens - b.cached_tokens - b.cache_write_tokens) * 3.0 + b.cached_tokens * 0.30
               + (b.cache_write_tokens - b.cache_write_1h_tokens) * 3.75 + b.cache_write_1h_tokens * 6.0
               + 20 * 15.0 for b in billed) / 1e6
    assert abs(cost_usd(first.usage, PRICE) + cost_usd(second.usage, PRICE) - hand) < 1e-12
    uncached = sum(b.input_tokens * 3.0 + 20 * 15.0 for b in billed) / 1e6
    assert hand < 0.4 * uncached


async def test_each_stream_gets_its_own_ttl_and_each_response_records_it() -> None:
    clock = Clock()
    async with serve_mock(tool_loop(calls_before_finish=0), cache=PrefixCache()) as mock, \
            make_http_client() as http:
        client = anthropic_client(mock.base_url, http, cadence=StreamCadence(clock=clock))
        busy = CacheScopedModel(client, cache_scope("m|blind|a", "agent"))
        slow = CacheScopedModel(client, cache_scope("m|blind|b", "agent"))
        busy_ttls, slow_ttls = [], [(await slow.respond(_request())).cache_ttl]
        for _ in range(4):  # `busy` asks every 100 s; `slow` waits 400 s between its two requests
            busy_ttls.append((await busy.respond(_request())).cache_ttl)
            clock.now += 100.0
        slow_ttls += [(await slow.respond(_request())).cache_ttl, (await slow.respond(_request())).cache_ttl]
    assert busy_ttls == ["5m"] * 4
    assert slow_ttls == ["5m", "1h", "1h"]  # from its first long gap on, for the rest of the run
    assert [m.get("ttl") for m in marks(mock.requests[-1].body)] == ["1h"] * 3
    assert StreamCadence(fixed="1h").ttl("any") == "1h"  # an endpoint's `cache_ttl = "1h"`


def _request() -> Any:
    from tests.runner.providers.support import request
    return request(system=ENVIRONMENT.system_prompt)


def test_usage_splits_cache_writes_by_ttl_when_the_provider_reports_it() -> None:
    fields = {"input_tokens": 10, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 300,
              "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
              "output_tokens": 7}
    usage = anthropic_usage(fields)
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens) == (
        1310, 1000, 300, 200)
    assert cost_usd(usage, PRICE) == pytest.approx((10 * 3.0 + 1000 * 0.30 + 100 * 3.75 + 200 * 6.0 + 7 * 15) / 1e6)
    older = anthropic_usage({k: v for k, v in fields.items() if k != "cache_creation"})
    assert older.cache_write_1h_tokens == 0  # no split reported: all 5-minute writes


def test_priced_anthropic_models_carry_their_one_hour_write_rate() -> None:
    anthropic = {name: p for name, p in default_prices().items() if name.startswith("anthropic:")}
    assert anthropic and all(p.cache_write_1h == 2 * p.input for p in anthropic.values())
    assert all(p.cache_write == pytest.approx(1.25 * p.input) for p in anthropic.values())
    assert default_prices()["anthropic:claude-sonnet-5-5"].cache_write_1h == 4.0
    openai = default_prices()["openai:gpt-4.1"]
    assert openai.cache_write_1h is None and openai.one_hour_write == openai.cache_write


# --- OpenAI-compatible: prompt_cache_key per stream, where the endpoint takes it --------------------

ENDPOINTS = {
    "oai": {"kind": "openai", "model": "gpt-test"},
    "oai-off": {"kind": "openai", "model": "gpt-test", "prompt_cache_key": False},
    "vllm": {"kind": "openai-compatible", "model": "qwen"},
    "vllm-on": {"kind": "openai-compatible", "model": "qwen", "prompt_cache_key": True},
}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


@pytest.mark.parametrize(("endpoint", "sent"), [("oai", True), ("oai-off", False), ("vllm", False),
                                                ("vllm-on", True)])
async def test_prompt_cache_key_per_stream_follows_the_endpoint_setting(endpoint: str, sent: bool,
                                                                        keys: None) -> None:
    cache = PrefixCache()
    async with serve_mock(cache=cache) as mock:
        table = {endpoint: {**ENDPOINTS[endpoint], "base_url": mock.base_url + "/v1"}}
        entry = build_model(endpoint, table)
        try:
            for stream in (STREAM, STREAM, "gpt-test|blind|banking_l1"):
                model = CacheScopedModel(entry.client, cache_scope(stream, "agent"))
                response = await model.respond(_request())
        finally:
            assert entry.http is not None
            await entry.http.aclose()
    keys_sent = [r.body.get("prompt_cache_key") for r in mock.requests]
    if not sent:
        assert keys_sent == [None, None, None]
        return
    assert keys_sent[0] == keys_sent[1] == prompt_cache_key(f"{STREAM}|agent") != keys_sent[2]
    assert len(keys_sent[0]) <= 64 and "lessons" not in keys_sent[0]  # OpenAI's limit; opaque
    # OpenAI's automatic caching is reported as cached tokens, priced at cached_input.
    assert response.usage.cached_input_tokens >= 1024
    price = Price(input=2.0, cached_input=0.5, cache_write=2.0, output=8.0)
    usage = response.usage
    assert cost_usd(usage, price) == pytest.approx(
        ((usage.input_tokens - usage.cached_input_tokens) * 2.0 + usage.cached_input_tokens * 0.5
         + usage.output_tokens * 8.0) / 1e6)


async def test_a_strict_server_works_by_default_and_refuses_the_key_once_when_it_is_turned_on(keys: None) -> None:
    """Why `prompt_cache_key` is off for generic servers: one that forbids unknown fields refuses it
    (a rejected request, sent once, naming the field), while the default request goes through."""
    async with serve_mock(with_quirks(MODES["strict"])) as mock:
        table = {name: {**ENDPOINTS[name], "base_url": mock.base_url + "/v1"} for name in ("vllm", "vllm-on")}
        default, turned_on = build_model("vllm", table), build_model("vllm-on", table)
        try:
            answered = await CacheScopedModel(default.client, cache_scope(STREAM, "agent")).respond(_request())
            forbidden = "prompt_cache_key: Extra inputs are not permitted"
            with pytest.raises(InfrastructureError, match=forbidden) as refused:
                await CacheScopedModel(turned_on.client, cache_scope(STREAM, "agent")).respond(_request())
        finally:
            for entry in (default, turned_on):
                assert entry.http is not None
                await entry.http.aclose()
    assert answered.turn.tool_calls and refused.value.policy.outcome == "stop_run"
    assert len(mock.requests) == 2 and "prompt_cache_key" in mock.requests[1].body


@pytest.mark.parametrize(("setting", "message"), [
    ({"prompt_cache_key": "yes"}, r"prompt_cache_key must be true or false"),
    ({"cache_ttl": "2h"}, r"cache_ttl must be one of 'auto', '5m', '1h', got '2h'"),
])
def test_bad_cache_settings_are_one_clear_error(setting: dict[str, Any], message: str, keys: None) -> None:
    table = {"x": {"kind": "openai", "model": "gpt-test", **setting}}
    with pytest.raises(ShiftbenchInputError, match=rf"\[endpoints\.x\]: {message}"):
        build_model("x", table)


def test_mock_refuses_an_unknown_ttl_and_a_one_hour_mark_after_a_five_minute_one() -> None:
    def body(*ttls: str) -> dict[str, Any]:
        blocks = [{"type": "text", "text": f"part {i} " * 400,
                   "cache_control": {"type": "ephemeral", **({"ttl": t} if t else {})}} for i, t in enumerate(ttls)]
        return {"system": blocks, "messages": [{"role": "user", "content": "hi"}]}

    cache = PrefixCache()
    assert isinstance(cache.bill(body("1h", "5m"), anthropic=True), str) is False
    assert "must come before" in str(cache.bill(body("", "1h"), anthropic=True))
    assert "'5m' or '1h'" in str(cache.bill(body("2h"), anthropic=True))

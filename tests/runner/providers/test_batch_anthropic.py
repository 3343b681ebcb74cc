"""Anthropic's Message Batches backend against the mock over loopback: each result's turn (thinking, text,
tool call) and usage (cache reads, 1-hour and 5-minute writes) as the live stream reads the same request,
errored / expired / canceled items, a batch failed whole, `find` saying it cannot tell, and the batch
calls' own retries."""

from __future__ import annotations

import httpx
import pytest

from bench.mock_provider import BatchSettings, Failure, MockProvider, serve_mock
from runner.providers import make_http_client
from runner.providers.anthropic import parse_message
from runner.providers.batch_anthropic import AnthropicBatches
from runner.providers.batch_api import BatchItem
from runner.providers.prompt_cache import FIVE_MINUTES, ONE_HOUR, StreamCadence
from runner.providers.retry import RetryNotice
from runner.providers.taxonomy import Failure as Kind
from runner.providers.taxonomy import InfrastructureError
from tests.runner.providers.batch_support import content_responder, items, requests_for, results, until_ended
from tests.runner.providers.support import FakeTime, anthropic_client, fast_retrier


def backend(mock: MockProvider, http: httpx.AsyncClient) -> AnthropicBatches:
    return AnthropicBatches(anthropic_client(mock.base_url, http))


async def test_results_carry_the_live_turn_and_usage_for_each_custom_id() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        batches = backend(mock, http)
        asked = requests_for(3)
        batch_id = await batches.submit(items(batches, asked), label="ignored")
        status = await until_ended(batches, batch_id)
        found = await results(batches, batch_id)
        # The live client streams; with its endpoint's cache_ttl at 1 hour it marks as the batch does.
        live = anthropic_client(mock.base_url, http, cadence=StreamCadence(fixed=ONE_HOUR))
        expected = {f"req-{n}": await live.respond(r) for n, r in enumerate(asked)}
    assert status.provider_status == "ended" and status.counts["succeeded"] == 3
    for custom_id, response in expected.items():
        assert found[custom_id].outcome == "succeeded"
        assert found[custom_id].response == response  # thinking kept with its signature, usage, TTL
    assert expected["req-0"].cache_ttl == "1h"
    usage = expected["req-0"].usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens,
            usage.output_tokens) == (700, 400, 120, 20, 31)


def test_a_whole_message_reads_as_its_stream_would() -> None:
    message = {"model": "claude-x-20260101", "content": [
        {"type": "thinking", "thinking": "hm", "signature": "s1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "order 7"}},
        {"type": "tool_use", "id": "toolu_2", "name": "finish", "input": {}}],
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3,
                  "output_tokens": 9}}
    turn, usage, served = parse_message(message)
    assert (turn.text, turn.reasoning, served) == ("Looking.", "hm", "claude-x-20260101")
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("toolu_1", "lookup", '{"q":"order 7"}'), ("toolu_2", "finish", "{}")]
    assert turn.provider_state == {"anthropic": {"thinking": [
        {"type": "thinking", "thinking": "hm", "signature": "s1"}, {"type": "redacted_thinking", "data": "opaque"}]}}
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (15, 7, 3)


async def test_item_bodies_are_the_live_body_without_stream() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        client = anthropic_client(mock.base_url, http)
        asked = requests_for(1)[0]
        live = client.body(asked, ONE_HOUR)
        batched = AnthropicBatches(client).body(asked)
    assert live.pop("stream") is True
    assert batched == live and "'ttl': '1h'" in repr(batched)


async def test_the_cache_ttl_is_the_endpoints_fixed_one_else_an_hour() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        asked = requests_for(1)[0]
        fixed = AnthropicBatches(anthropic_client(mock.base_url, http, cadence=StreamCadence(fixed=FIVE_MINUTES)))
        asked_for = AnthropicBatches(anthropic_client(mock.base_url, http), cache_ttl=FIVE_MINUTES)
        marks = [repr(b.body(asked)) for b in (fixed, asked_for)]
        batch_id = await fixed.submit([BatchItem("a", fixed.body(asked))], label="")
        await until_ended(fixed, batch_id)
        found = await results(fixed, batch_id)
    assert all("'cache_control': {'type': 'ephemeral'}" in m and "'ttl'" not in m for m in marks)
    assert found["a"].response is not None and found["a"].response.cache_ttl == "5m"


async def test_errored_expired_and_canceled_items() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        batches = backend(mock, http)
        mock.batches.settings = BatchSettings(errored=frozenset({"req-0"}), expire_after=2)
        expiring = await batches.submit(items(batches, requests_for(3)), label="")
        await until_ended(batches, expiring)
        expired = await results(batches, expiring)
        mock.batches.settings = BatchSettings(latency_s=3600)
        cancelled = await batches.submit(items(batches, requests_for(2)), label="")
        await batches.cancel(cancelled)
        canceling = await batches.status(cancelled)
        await until_ended(batches, cancelled)
        canceled = await results(batches, cancelled)
    assert {k: r.outcome for k, r in expired.items()} == {"req-0": "errored", "req-1": "succeeded",
                                                          "req-2": "expired"}
    assert expired["req-0"].error == "api_error: mock error for req-0"
    assert canceling.provider_status == "canceling" and not canceling.ended
    assert {r.outcome for r in canceled.values()} == {"canceled"} and len(canceled) == 2


async def test_a_failed_batch_errors_every_item_with_its_reason() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.settings = BatchSettings(fail="overloaded, try later")
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(2)), label="")
        await until_ended(batches, batch_id)
        found = await results(batches, batch_id)
    assert {r.error for r in found.values()} == {"api_error: overloaded, try later"}


async def test_find_cannot_tell_as_message_batches_carry_no_metadata() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(1)), label="sweep-1")
        assert await batches.find("sweep-1") is None
    assert mock.batches.batches[batch_id].metadata is None  # nothing carried the label


async def test_a_429_on_create_is_retried_once_and_makes_one_batch() -> None:
    fake, notices = FakeTime(), []
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.fail_next("POST", "/v1/messages/batches", Failure(429, "rate limited", retry_after="3"))
        batches = AnthropicBatches(anthropic_client(mock.base_url, http, retrier=fast_retrier(fake, notices)))
        batch_id = await batches.submit(items(batches, requests_for(2)), label="")
    assert list(mock.batches.batches) == [batch_id]
    assert mock.batches.calls.count(("POST", "/v1/messages/batches")) == 2
    assert [n.kind for n in notices] == ["rate limited"] and fake.sleeps[0] >= 3
    assert dict(mock.batches.submissions) == {"req-0": 1, "req-1": 1}


async def test_a_400_on_create_is_not_retried() -> None:
    notices: list[RetryNotice] = []
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.fail_next("POST", "/v1/messages/batches", Failure(400, "requests.0.params: bad"))
        batches = AnthropicBatches(anthropic_client(mock.base_url, http, retrier=fast_retrier(notices=notices)))
        with pytest.raises(InfrastructureError) as refused:
            await batches.submit(items(batches, requests_for(1)), label="")
    assert refused.value.failure is Kind.REJECTED and notices == []
    assert mock.batches.calls.count(("POST", "/v1/messages/batches")) == 1 and not mock.batches.batches


async def test_a_results_url_on_another_host_is_not_followed_with_the_key() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(1)), label="")
        await until_ended(batches, batch_id)
        mock.batches.host = _Elsewhere(mock)  # the batch object now names a results URL on another host
        with pytest.raises(InfrastructureError) as refused:
            await results(batches, batch_id)
    assert refused.value.failure is Kind.REJECTED and "another host" in str(refused.value)


class _Elsewhere:
    def __init__(self, mock: MockProvider) -> None:
        self.base_url = "http://198.51.100.7:9"
        self.answer = mock.answer


async def test_a_create_whose_answer_was_lost_is_made_again_as_nothing_can_find_it() -> None:
    """Message batches carry no label, so a retried create cannot look for the first: the one case where a
    request is submitted twice (the caller journals before it waits, and cancels what it cannot use)."""
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.lose_next_answer("POST", "/v1/messages/batches")
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(1)), label="")
    assert list(mock.batches.batches)[-1] == batch_id and len(mock.batches.batches) == 2
    assert dict(mock.batches.submissions) == {"req-0": 2}


async def test_a_failed_results_download_is_retried_and_no_item_is_handed_out_twice() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(3)), label="")
        await until_ended(batches, batch_id)
        mock.batches.fail_next("GET", f"/v1/messages/batches/{batch_id}/results", Failure(529, "overloaded"))
        found = await results(batches, batch_id)
    assert sorted(found) == ["req-0", "req-1", "req-2"]
    assert mock.batches.calls.count(("GET", f"/v1/messages/batches/{batch_id}/results")) == 2


async def test_a_slow_batch_reports_its_progress_until_it_ends() -> None:
    clock = [1_800_000_000.0]
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.clock, mock.batches.settings = (lambda: clock[0]), BatchSettings(latency_s=100)
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(4)), label="")
        clock[0] += 75
        partway = await batches.status(batch_id)
        clock[0] += 25
        ended = await batches.status(batch_id)
    assert (partway.ended, partway.provider_status) == (False, "in_progress")
    assert partway.counts == {"processing": 1, "succeeded": 3, "errored": 0, "canceled": 0, "expired": 0}
    assert ended.ended and ended.counts["succeeded"] == 4

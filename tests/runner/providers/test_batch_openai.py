"""OpenAI's Batch API backend against the mock over loopback: every item's turn and usage as the live path
reads the same request, partial errors, expiry with part done, a batch failed whole, cancel, find by label,
and the batch calls' own retries (a 429 is retried once and makes one batch; a 400 is not retried)."""

from __future__ import annotations

import dataclasses

import httpx
import orjson
import pytest

from bench.mock_provider import BatchSettings, Failure, MockProvider, serve_mock
from runner.providers import OpenAICompatClient, make_http_client
from runner.providers import batch_openai as module
from runner.providers.batch_api import BatchItem
from runner.providers.batch_openai import OpenAIBatches
from runner.providers.endpoint import estimated_usage
from runner.providers.retry import BEFORE_RETRY, RetryNotice
from runner.providers.taxonomy import Failure as Kind
from runner.providers.taxonomy import InfrastructureError
from tests.runner.providers.batch_support import content_responder, items, requests_for, results, until_ended
from tests.runner.providers.support import KEY, FakeTime, fast_retrier, openai_client


def backend(mock: MockProvider, http: httpx.AsyncClient, **retry: object) -> OpenAIBatches:
    return OpenAIBatches(openai_client(mock.base_url, http, retrier=fast_retrier(**retry)))  # type: ignore[arg-type]


async def test_results_carry_the_live_turn_and_usage_for_each_custom_id() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        batches = backend(mock, http)
        asked = requests_for(3)
        batch_id = await batches.submit(items(batches, asked), label="sweep-1-round-1")
        status = await until_ended(batches, batch_id)
        found = await results(batches, batch_id)
        live = openai_client(mock.base_url, http)  # streamed, as a sweep's live calls are
        expected = {f"req-{n}": await live.respond(r) for n, r in enumerate(asked)}
    assert status.provider_status == "completed" and status.counts["succeeded"] == 3
    assert {k: r.outcome for k, r in found.items()} == dict.fromkeys(expected, "succeeded")
    for custom_id, response in expected.items():
        assert found[custom_id].response == response  # turn, usage (cached, cache-write, output), served model
    assert found["req-2"].response is not None and found["req-2"].response.usage.cached_input_tokens == 400


async def test_item_bodies_are_the_live_body_without_its_streaming_fields() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http)
        batches = OpenAIBatches(client)
        asked = requests_for(1)[0]
        live = client.body(asked)
    assert live["stream"] is True and "stream_options" in live
    assert batches.body(asked) == {k: v for k, v in live.items() if k not in ("stream", "stream_options")}


async def test_errored_items_come_back_errored_and_the_rest_succeed() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        mock.batches.settings = BatchSettings(errored=frozenset({"req-1"}))
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(3)), label="errors")
        await until_ended(batches, batch_id)
        found = await results(batches, batch_id)
    assert {k: r.outcome for k, r in found.items()} == {"req-0": "succeeded", "req-1": "errored",
                                                        "req-2": "succeeded"}
    assert found["req-1"].error == "HTTP 500: mock error for req-1" and found["req-1"].response is None


async def test_an_expired_batch_keeps_what_was_done_and_expires_the_rest() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        mock.batches.settings = BatchSettings(expire_after=1)
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(3)), label="expiring")
        status = await until_ended(batches, batch_id)
        from_error_file = await results(batches, batch_id)
        mock.batches.batches[batch_id].error_file_id = None  # a provider that leaves expired items out
        absent = await results(batches, batch_id)
    assert status.provider_status == "expired"
    for found in (from_error_file, absent):
        assert {k: r.outcome for k, r in found.items()} == {"req-0": "succeeded", "req-1": "expired",
                                                            "req-2": "expired"}


async def test_a_batch_failed_whole_says_why_and_errors_every_item() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.settings = BatchSettings(fail="Enqueued token limit reached")
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(2)), label="failing")
        status = await until_ended(batches, batch_id)
        found = await results(batches, batch_id)
        # A line the server finds invalid (a streamed body) fails its batch's validation as well.
        invalid = await batches.submit([BatchItem("bad", {"model": "m", "messages": [], "stream": True})], "bad")
        refused = await until_ended(batches, invalid)
    assert status.provider_status == "failed" and status.failed_reason == "Enqueued token limit reached"
    assert {r.outcome for r in found.values()} == {"errored"} and set(found) == {"req-0", "req-1"}
    assert "the batch failed: Enqueued token limit reached" == found["req-0"].error
    assert refused.provider_status == "failed" and "streaming" in refused.failed_reason


async def test_cancel_cancels_what_is_not_done_and_is_no_error_once_ended() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.settings = BatchSettings(latency_s=3600)
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(2)), label="cancelled")
        await batches.cancel(batch_id)
        cancelling = await batches.status(batch_id)
        status = await until_ended(batches, batch_id)
        found = await results(batches, batch_id)
        posts = sum(call == ("POST", f"/v1/batches/{batch_id}/cancel") for call in mock.batches.calls)
        await batches.cancel(batch_id)  # ended: nothing is sent
        again = sum(call == ("POST", f"/v1/batches/{batch_id}/cancel") for call in mock.batches.calls)
    assert cancelling.provider_status == "cancelling" and not cancelling.ended
    assert status.provider_status == "cancelled"
    assert {k: r.outcome for k, r in found.items()} == {"req-0": "canceled", "req-1": "canceled"}
    assert posts == again == 1


async def test_find_recognises_a_batch_by_its_label_across_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "_PAGE", 2)
    async with serve_mock() as mock, make_http_client() as http:
        batches = backend(mock, http)
        made = [await batches.submit(items(batches, requests_for(1)), label=f"label-{n}") for n in range(5)]
        assert await batches.find("label-0") == made[0]  # the oldest: on the third page of two
        assert await batches.find("label-3") == made[3]
        assert await batches.find("never-submitted") is None
    assert mock.batches.batches[made[2]].metadata == {module.LABEL_KEY: "label-2"}


async def test_a_429_on_create_is_retried_after_its_retry_after_and_makes_one_batch() -> None:
    fake, notices = FakeTime(), []
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.fail_next("POST", "/v1/batches", Failure(429, "slow down", retry_after="7"))
        batches = OpenAIBatches(openai_client(mock.base_url, http, retrier=fast_retrier(fake, notices)))
        batch_id = await batches.submit(items(batches, requests_for(2)), label="retried")
    assert list(mock.batches.batches) == [batch_id]
    assert mock.batches.calls.count(("POST", "/v1/batches")) == 2
    assert ("GET", "/v1/batches") in mock.batches.calls  # the retry looked for a batch made after all
    assert [n.kind for n in notices] == ["rate limited"] and fake.sleeps[0] >= 7
    assert dict(mock.batches.submissions) == {"req-0": 1, "req-1": 1}


async def test_a_400_on_create_is_not_retried() -> None:
    notices: list[RetryNotice] = []
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.fail_next("POST", "/v1/batches", Failure(400, "metadata is invalid"))
        batches = OpenAIBatches(openai_client(mock.base_url, http, retrier=fast_retrier(notices=notices)))
        with pytest.raises(InfrastructureError) as refused:
            await batches.submit(items(batches, requests_for(1)), label="refused")
    assert refused.value.failure is Kind.REJECTED and "metadata is invalid" in str(refused.value)
    assert mock.batches.calls.count(("POST", "/v1/batches")) == 1 and notices == []
    assert not mock.batches.batches and not mock.batches.submissions


async def test_a_refused_key_is_an_auth_failure_that_never_shows_the_key() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.key = "sk-the-right-one"
        batches = backend(mock, http)
        with pytest.raises(InfrastructureError) as refused:
            await batches.submit(items(batches, requests_for(1)), label="auth")
    assert refused.value.failure is Kind.AUTH
    assert KEY not in str(refused.value) and KEY not in repr(batches.__dict__) + repr(batches._http.target)
    assert mock.batches.calls == [("POST", "/v1/files")]


async def test_a_create_whose_answer_was_lost_is_found_by_its_label_not_made_twice() -> None:
    notices: list[RetryNotice] = []
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.lose_next_answer("POST", "/v1/batches")
        batches = OpenAIBatches(openai_client(mock.base_url, http, retrier=fast_retrier(notices=notices)))
        batch_id = await batches.submit(items(batches, requests_for(2)), label="lost-answer")
    assert list(mock.batches.batches) == [batch_id]  # made once, by the first attempt
    assert mock.batches.calls.count(("POST", "/v1/batches")) == 1
    assert [n.kind for n in notices] == ["transport"]
    assert dict(mock.batches.submissions) == {"req-0": 1, "req-1": 1}


async def test_failed_polls_and_downloads_are_retried_and_no_item_is_handed_out_twice() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(3)), label="flaky")
        mock.batches.fail_next("GET", f"/v1/batches/{batch_id}", Failure(503, "busy"), Failure(500, "oops"))
        await until_ended(batches, batch_id)
        output = mock.batches.batches[batch_id].output_file_id
        mock.batches.fail_next("GET", f"/v1/files/{output}/content", Failure(502, "bad gateway"))
        found = await results(batches, batch_id)
    assert sorted(found) == ["req-0", "req-1", "req-2"] and {r.outcome for r in found.values()} == {"succeeded"}
    assert mock.batches.calls.count(("GET", f"/v1/files/{output}/content")) == 2


async def test_batch_calls_are_not_priced_as_model_calls_on_retry() -> None:
    def refuse(attempt: int, usage: object) -> None:
        raise AssertionError("the pricing layer's retry hook ran for a batch-API call")

    token = BEFORE_RETRY.set(refuse)
    try:
        async with serve_mock() as mock, make_http_client() as http:
            mock.batches.fail_next("POST", "/v1/files", Failure(429, "slow down", retry_after="0"))
            batches = backend(mock, http)
            batch_id = await batches.submit(items(batches, requests_for(1)), label="unpriced")
    finally:
        BEFORE_RETRY.reset(token)
    assert list(mock.batches.batches) == [batch_id]


async def test_a_batch_over_the_providers_limit_is_refused_before_anything_is_sent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "MAX_ITEMS", 2)
    async with serve_mock() as mock, make_http_client() as http:
        batches = backend(mock, http)
        with pytest.raises(ValueError, match="at most 2 requests"):
            await batches.submit(items(batches, requests_for(3)), label="too-big")
    assert mock.batches.calls == []


async def test_a_completed_batch_is_read_without_its_input_file_unless_a_reply_lacks_usage() -> None:
    async with serve_mock(content_responder) as mock, make_http_client() as http:
        batches = backend(mock, http)
        asked = items(batches, requests_for(2))
        batch_id = await batches.submit(asked, label="usage")
        await until_ended(batches, batch_id)
        batch = mock.batches.batches[batch_id]
        await results(batches, batch_id)
        input_read = ("GET", f"/v1/files/{batch.input_file_id}/content")
        skipped = input_read not in mock.batches.calls
        # A server that sends no usage (as llama-cpp-python when streaming): estimated from the body.
        output = mock.batches.files[str(batch.output_file_id)]
        lines = [orjson.loads(line) for line in output.content.splitlines()]
        for line in lines:
            del line["response"]["body"]["usage"]
        mock.batches.files[output.id] = dataclasses.replace(output, content=b"".join(orjson.dumps(x) + b"\n"
                                                                                    for x in lines))
        found = await results(batches, batch_id)
    assert skipped and input_read in mock.batches.calls
    response = found["req-1"].response
    assert response is not None and response.usage.estimated
    assert response.usage == estimated_usage(orjson.dumps(asked[1].body), response.turn, 2048)


async def test_the_upload_purpose_is_openais_word_unless_the_host_documents_another() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        default = backend(mock, http)
        assert default._purpose == "batch"
        together = OpenAIBatches(openai_client(mock.base_url, http), file_purpose="batch-api")
        with pytest.raises(InfrastructureError, match="purpose must be 'batch'"):  # the mock speaks OpenAI's word
            await together.submit(items(together, requests_for(1)), label="together")
        known = OpenAIBatches(OpenAICompatClient("m", base_url="https://api.together.xyz/v1", api_key="k", http=http))
    assert known._purpose == "batch-api"


async def test_a_slow_batch_reports_its_progress_until_it_ends() -> None:
    clock = [1_800_000_000.0]
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.clock, mock.batches.settings = (lambda: clock[0]), BatchSettings(latency_s=100)
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(4)), label="slow")
        clock[0] += 50
        halfway = await batches.status(batch_id)
        clock[0] += 50
        finalizing = await batches.status(batch_id)
        ended = await batches.status(batch_id)
    assert (halfway.ended, halfway.provider_status) == (False, "in_progress")
    assert halfway.counts == {"total": 4, "succeeded": 2, "errored": 0, "processing": 2}
    assert (finalizing.ended, finalizing.provider_status, ended.provider_status) == (False, "finalizing", "completed")


async def test_a_batch_that_ends_while_being_cancelled_is_no_error() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        batches = backend(mock, http)
        batch_id = await batches.submit(items(batches, requests_for(1)), label="race")
        await batches.cancel(batch_id)  # status: finalizing (not ended); by the cancel it has completed
        status = await batches.status(batch_id)
        found = await results(batches, batch_id)
    assert mock.batches.calls.count(("POST", f"/v1/batches/{batch_id}/cancel")) == 1  # refused with a 400
    assert status.provider_status == "completed" and found["req-0"].outcome == "succeeded"

"""Every provider failure gets one class, and the class alone decides retry, breaker and outcome."""

from __future__ import annotations

import httpx
import pytest

from bench.mock_provider import Failure as MockFailure
from bench.mock_provider import serve_mock
from bench.mock_quirks import NULL_CONTENT_ERROR
from runner.providers import make_http_client
from runner.providers.failures import AttemptFailed, classify, stream_error, transport_failure
from runner.providers.ledger import RequestLedger
from runner.providers.secret import Secret
from runner.providers.taxonomy import POLICIES, Failure, InfrastructureError, ProviderError, RateLimited
from tests.runner.providers.support import FakeTime, fast_retrier, openai_client, request

SECRET = Secret("sk-abc")


@pytest.mark.parametrize(("status", "failure"), [
    (400, Failure.REJECTED), (422, Failure.REJECTED), (418, Failure.REJECTED), (401, Failure.AUTH),
    (403, Failure.AUTH), (404, Failure.NOT_FOUND), (408, Failure.TIMEOUT), (409, Failure.SERVER_ERROR),
    (413, Failure.CONTEXT_TOO_LONG), (429, Failure.RATE_LIMITED), (500, Failure.SERVER_ERROR),
    (502, Failure.SERVER_ERROR), (503, Failure.OVERLOADED), (529, Failure.OVERLOADED),
])
def test_status_classes(status: int, failure: Failure) -> None:
    assert classify(status) is failure


@pytest.mark.parametrize(("status", "text", "failure"), [
    (400, "This model's maximum context length is 8192 tokens", Failure.CONTEXT_TOO_LONG),
    (400, "prompt is too long: 210000 tokens > 200000 maximum", Failure.CONTEXT_TOO_LONG),
    (400, "context_length_exceeded", Failure.CONTEXT_TOO_LONG),
    (500, "the input exceeds the model's context window", Failure.CONTEXT_TOO_LONG),
    (400, "The response was filtered due to the prompt triggering content management policy",
     Failure.CONTENT_FILTERED),
    (400, "messages: field required", Failure.REJECTED),
    (500, NULL_CONTENT_ERROR, Failure.REJECTED),
    (500, "1 validation error for ChatCompletionRequest", Failure.REJECTED),
    (400, "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
     Failure.CONTEXT_TOO_LONG),
    (500, "internal error", Failure.SERVER_ERROR),
])
def test_the_provider_s_own_words_win_over_its_status(status: int, text: str, failure: Failure) -> None:
    assert classify(status, text) is failure


def test_every_class_has_one_policy_and_only_transient_ones_retry() -> None:
    assert set(POLICIES) == set(Failure)
    retried = {f for f, p in POLICIES.items() if p.retry}
    assert retried == {Failure.RATE_LIMITED, Failure.OVERLOADED, Failure.SERVER_ERROR, Failure.TIMEOUT,
                       Failure.TRANSPORT, Failure.MALFORMED}
    assert {f for f, p in POLICIES.items() if p.outcome == "requeue"} == retried
    assert {f: p.end_reason for f, p in POLICIES.items() if p.outcome == "end_episode"} == {
        Failure.CONTEXT_TOO_LONG: "context_length", Failure.CONTENT_FILTERED: "content_filter"}
    assert Failure.RATE_LIMITED not in {f for f, p in POLICIES.items() if p.trips_breaker}


def test_stream_errors_and_transport_failures_are_classified() -> None:
    overloaded = stream_error({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                              SECRET)
    assert (overloaded.failure, overloaded.retryable, overloaded.kind) == (Failure.OVERLOADED, True, RateLimited)
    too_long = stream_error({"error": {"code": "context_length_exceeded", "message": "too big"}}, SECRET)
    assert too_long.failure is Failure.CONTEXT_TOO_LONG and not too_long.retryable
    refused = transport_failure(httpx.ConnectError("refused"), SECRET)
    assert refused.failure is Failure.TRANSPORT and refused.retryable
    wrong_scheme = transport_failure(httpx.UnsupportedProtocol("ftp"), SECRET)
    assert wrong_scheme.failure is Failure.NOT_FOUND and not wrong_scheme.retryable


def test_the_headline_names_the_class_the_message_and_the_advice() -> None:
    error = InfrastructureError("HTTP 401: invalid key", failure=Failure.AUTH)
    assert error.headline().startswith("auth (HTTP 401: invalid key); check the API key")
    assert "resume later" in ProviderError("HTTP 503", failure=Failure.OVERLOADED).headline()


def test_the_ledger_bounds_a_body_across_calls_and_never_resends_a_rejection() -> None:
    ledger = RequestLedger(max_attempts=3)
    for _ in range(3):
        ledger.admit("a")
        ledger.failed("a", AttemptFailed(Failure.OVERLOADED, "HTTP 503"))
    assert ledger.left("a") == 0
    with pytest.raises(AttemptFailed, match="used all 3 of its attempts") as spent:
        ledger.admit("a")
    assert spent.value.final and not spent.value.retryable
    ledger.admit("b")
    ledger.failed("b", AttemptFailed(Failure.REJECTED, "HTTP 400: bad"))
    assert ledger.left("b") == 0
    with pytest.raises(AttemptFailed, match="refused before"):
        ledger.admit("b")
    ledger.admit("c")
    ledger.failed("c", AttemptFailed(Failure.TIMEOUT, "stalled"))
    ledger.succeeded("c")
    assert ledger.used("c") == 0 and ledger.refused == 2
    for _ in range(10):  # successes never use a body's attempts up (two units may send the same body)
        ledger.admit("d")
        ledger.succeeded("d")


@pytest.mark.parametrize("status", [400, 401])
async def test_a_rejected_body_is_never_sent_twice_even_by_a_second_call(status: int) -> None:
    fake = FakeTime()
    ledger = RequestLedger(max_attempts=6)
    async with serve_mock(lambda r: MockFailure(status, "no")) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, fast_retrier(fake, ledger=ledger))
        for _ in range(3):
            with pytest.raises(ProviderError) as caught:
                await client.respond(request())
            assert caught.value.attempts_left == 0
    assert len(mock.requests) == 1 and fake.sleeps == []


async def test_a_500_that_is_a_validation_error_is_sent_once() -> None:
    """llama-cpp-python answers a body its validator refuses with HTTP 500 and the validator's text: that is
    a rejected request, not an outage, so no layer sends it again."""
    fake = FakeTime()
    ledger = RequestLedger(max_attempts=6)
    body = {"error": {"message": NULL_CONTENT_ERROR, "type": "internal_server_error", "param": None, "code": None}}
    async with serve_mock(lambda r: MockFailure(500, body=body)) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, fast_retrier(fake, ledger=ledger))
        for _ in range(2):
            with pytest.raises(ProviderError) as caught:
                await client.respond(request())
            assert caught.value.failure is Failure.REJECTED and caught.value.attempts_left == 0
    assert len(mock.requests) == 1 and fake.sleeps == []


async def test_attempts_for_one_body_are_bounded_across_calls() -> None:
    fake = FakeTime()
    ledger = RequestLedger(max_attempts=6)
    async with serve_mock(lambda r: MockFailure(503)) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, fast_retrier(fake, ledger=ledger, max_attempts=4))
        with pytest.raises(RateLimited, match="gave up after 4 attempts") as first:
            await client.respond(request())
        assert first.value.attempts_left == 2
        with pytest.raises(RateLimited, match="gave up after 2 attempts") as second:
            await client.respond(request())
        assert second.value.attempts_left == 0
        with pytest.raises(RateLimited, match="not sent again"):
            await client.respond(request())
    assert len(mock.requests) == 6

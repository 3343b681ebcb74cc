"""Retry-After and rate-limit headers read into seconds and limits, and errors classified."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from runner.providers.failures import stream_error
from runner.providers.headers import LimitReading, parse_duration, read_limits, server_wait
from runner.providers.secret import Secret
from runner.providers.taxonomy import ProviderError, RateLimited

NOW = datetime(2030, 3, 17, 12, 0, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("7", 7.0),
    ("soon", None), ("1x", None), ("", None),
])
def test_durations(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_in_seconds_date_or_milliseconds() -> None:
    assert server_wait({"retry-after": "12"}, NOW) == 12
    assert server_wait({"retry-after": "Sun, 17 Mar 2030 12:00:40 GMT"}, NOW) == 40
    assert server_wait({"retry-after": "Sun, 17 Mar 2030 11:00:00 GMT"}, NOW) == 0  # already past
    assert server_wait({"retry-after-ms": "250", "retry-after": "1"}, NOW) == 0.25
    assert server_wait({"retry-after": "whenever"}, NOW) is None
    assert server_wait({}, NOW) is None


def test_without_retry_after_the_exhausted_limit_s_reset_counts() -> None:
    headers = {"x-ratelimit-remaining-requests": "12", "x-ratelimit-reset-requests": "2s",
               "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "45s"}
    assert server_wait(headers, NOW) == 45
    anthropic = {"anthropic-ratelimit-tokens-remaining": "0",
                 "anthropic-ratelimit-tokens-reset": "2030-03-17T12:00:30+00:00"}
    assert server_wait(anthropic, NOW) == 30


def test_limits_are_read_in_both_dialects() -> None:
    openai = read_limits({"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499",
                          "x-ratelimit-reset-requests": "120ms", "x-ratelimit-limit-tokens": "30000"}, NOW)
    assert openai == {"requests": LimitReading(500, 499, 0.12), "tokens": LimitReading(30000)}
    anthropic = read_limits({"anthropic-ratelimit-requests-limit": "50",
                             "anthropic-ratelimit-requests-remaining": "3",
                             "anthropic-ratelimit-requests-reset": "2030-03-17T12:00:05Z",
                             "anthropic-ratelimit-input-tokens-limit": "40000"}, NOW)
    assert anthropic == {"requests": LimitReading(50, 3, 5), "tokens": LimitReading(40000)}


def test_errors_inside_a_stream() -> None:
    secret = Secret("sk-abc")
    overloaded = stream_error({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                              secret)
    assert (overloaded.kind, overloaded.retryable, overloaded.status) == (RateLimited, True, 529)
    invalid = stream_error({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}, secret)
    assert (invalid.kind, invalid.retryable) == (ProviderError, False)
    openrouter = stream_error({"error": {"code": 502, "message": "upstream sk-abc failed"}}, secret)
    assert openrouter.retryable and "sk-abc" not in str(openrouter)

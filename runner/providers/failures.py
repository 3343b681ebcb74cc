"""Where provider failures enter: every httpx error, non-2xx status and in-stream error is classified here,
once, into a `Failure` of `runner.providers.taxonomy` (whose policy then decides what happens).

    AttemptFailed(failure, message)   one attempt's failure; only the retry loop sees it
    statuses        400/422/other 4xx rejected, 401/403 auth, 404 not found, 408 timeout, 409 server error,
                    413 context too long, 429 rate limited, 503/529 overloaded, other 5xx server error
    message rules   a provider's own words win over its status: "maximum context length" is context too
                    long, "content policy" is content filtered, a 500 that names a request validator or
                    llama.cpp's "Failed to parse tool call arguments" is rejected (`TEXT_RULES`; add a
                    provider's phrasing there)
    httpx errors    timeouts are timeout, a wrong URL scheme is not found, the rest is transport
    replies         malformed JSON or a cut stream is malformed reply

The retry loop turns the last `AttemptFailed` into an `InfrastructureError` chained to the original
httpx exception. Messages carry the status and the provider's own error text, with the key redacted.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import orjson

from runner.providers.headers import server_wait
from runner.providers.secret import Secret
from runner.providers.taxonomy import POLICIES, Failure, InfrastructureError, error_type
from simulators.protocol import JSON

__all__ = ["STATUS_CLASSES", "TEXT_RULES", "AttemptFailed", "check_status", "classify", "parse_json_object",
           "stream_error", "transport_failure"]

_ERROR_BODY_LIMIT = 4096
_TIMEOUT_WHAT: dict[type[httpx.TimeoutException], str] = {
    httpx.ReadTimeout: "waiting for the next byte (stalled)",
    httpx.WriteTimeout: "sending the request",
    httpx.PoolTimeout: "waiting for a free connection",
}
# Anthropic names its errors instead of (or, in streams, without) a status code.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}

STATUS_CLASSES: dict[int, Failure] = {
    401: Failure.AUTH, 403: Failure.AUTH, 404: Failure.NOT_FOUND, 408: Failure.TIMEOUT,
    409: Failure.SERVER_ERROR, 413: Failure.CONTEXT_TOO_LONG, 429: Failure.RATE_LIMITED,
    503: Failure.OVERLOADED, 529: Failure.OVERLOADED,
}
"""Statuses whose class is not simply "4xx rejected, 5xx server error"."""

TEXT_RULES: tuple[tuple[re.Pattern[str], Failure], ...] = (
    (re.compile(r"context[ _]length|context[ _]window|maximum context|prompt is too long|too many (input )?tokens"
                r"|exceeds? the (model's |available )?(max(imum)? )?(context|input)", re.I), Failure.CONTEXT_TOO_LONG),
    (re.compile(r"content[ _]filter|content[ _]policy|content management policy|safety system", re.I),
     Failure.CONTENT_FILTERED),
    # Servers built on request validators (llama-cpp-python, FastAPI) answer an invalid body with a 500 whose
    # text is the validator's: resending the same body would fail the same way, so it is a rejection.
    (re.compile(r"validation error|input should be a valid|\bfield required\b|'loc': \(", re.I),
     Failure.REJECTED),
    # llama.cpp parses the history's tool-call arguments before rendering: not JSON is a 500 that recurs.
    (re.compile(r"failed to parse tool call arguments", re.I), Failure.REJECTED),
)
"""The provider's own words, checked before its status (first match wins)."""


def classify(status: int, text: str = "") -> Failure:
    """The class of an error status with the provider's error text (message, type or code)."""
    for pattern, failure in TEXT_RULES:
        if pattern.search(text):
            return failure
    if status in STATUS_CLASSES:
        return STATUS_CLASSES[status]
    return Failure.SERVER_ERROR if status >= 500 else Failure.REJECTED


class AttemptFailed(Exception):
    """One attempt failed. `final`: do not try this request again whatever its class (the breaker gave
    up on the endpoint, or the request's attempt bound is spent)."""

    def __init__(self, failure: Failure, message: str, *, server_wait: float | None = None,
                 status: int | None = None, final: bool = False) -> None:
        super().__init__(message)
        self.failure = failure
        self.message = message
        self.server_wait = server_wait
        self.status = status
        self.final = final

    @property
    def retryable(self) -> bool:
        return POLICIES[self.failure].retry and not self.final

    @property
    def kind(self) -> type[InfrastructureError]:
        return error_type(self.failure)


async def check_status(response: httpx.Response, secret: Secret, now: float) -> None:
    """Raise `AttemptFailed` (chained to an `httpx.HTTPStatusError`) unless the status is 2xx."""
    if response.is_success:
        return
    status = response.status_code
    body = await _read_bounded(response)
    detail = secret.redact(_error_text(body))
    failure = classify(status, f"{detail} {_error_code(body)}")
    wait = server_wait(response.headers, now) if POLICIES[failure].retry else None
    cause = httpx.HTTPStatusError(f"HTTP {status} from {secret.redact(str(response.request.url))}",
                                  request=response.request, response=response)
    raise AttemptFailed(failure, f"HTTP {status}: {detail}", server_wait=wait, status=status) from cause


def stream_error(payload: JSON, secret: Secret) -> AttemptFailed:
    """An error the provider sent inside a 200 stream (OpenRouter chunks, Anthropic `error` events)."""
    error = payload.get("error", payload) if isinstance(payload, dict) else {}
    error = error if isinstance(error, dict) else {"message": str(error)}
    code = error.get("code")
    status = code if isinstance(code, int) else _ERROR_TYPE_STATUS.get(str(error.get("type")), 500)
    message = secret.redact(str(error.get("message") or error.get("type") or "error"))
    failure = classify(status, f"{message} {error.get('type') or ''} {code if isinstance(code, str) else ''}")
    return AttemptFailed(failure, f"error in stream ({status}): {message}", status=status)


def parse_json_object(text: str) -> dict[str, Any]:
    """A JSON object from the provider; anything else is a (retryable) garbled response."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise AttemptFailed(Failure.MALFORMED, "the provider sent malformed JSON") from exc
    if not isinstance(data, dict):
        raise AttemptFailed(Failure.MALFORMED, "the provider sent JSON that is not an object")
    return data


def transport_failure(exc: httpx.HTTPError, secret: Secret) -> AttemptFailed:
    if isinstance(exc, httpx.ConnectTimeout):
        # No connection, so nothing was sent: a failure of the server's host, not of the request, like a
        # refused connection (same retry policy as a timeout; a pool fails it over to another replica).
        return AttemptFailed(Failure.TRANSPORT, "timed out connecting")
    if isinstance(exc, httpx.TimeoutException):
        what = _TIMEOUT_WHAT.get(type(exc), "waiting")
        return AttemptFailed(Failure.TIMEOUT, f"timed out {what}")
    detail = secret.redact(str(exc)) or "no detail"
    # A wrong scheme in base_url will not fix itself; anything else on the wire might.
    failure = Failure.NOT_FOUND if isinstance(exc, httpx.UnsupportedProtocol) else Failure.TRANSPORT
    return AttemptFailed(failure, f"{type(exc).__name__}: {detail}")


async def _read_bounded(response: httpx.Response) -> bytes:
    """The start of an error body: enough to show the provider's message, never a whole stream."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= _ERROR_BODY_LIMIT:
            break
    return b"".join(chunks)[:_ERROR_BODY_LIMIT]


def _error_text(body: bytes) -> str:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body.decode("utf-8", "replace").strip()[:500] or "(empty body)"
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:500]
    return body.decode("utf-8", "replace")[:500]


def _error_code(body: bytes) -> str:
    """The machine-readable part of an error body (OpenAI's `code` and `type`), for the text rules."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    error = data.get("error", data) if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return ""
    return " ".join(str(error[key]) for key in ("code", "type") if isinstance(error.get(key), str))

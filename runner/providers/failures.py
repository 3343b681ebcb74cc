"""Where provider failures enter: every httpx error, non-2xx status and in-stream error is classified here.

    AttemptFailed(kind, retryable, server_wait)   one attempt's failure; only the retry loop sees it
    kind:
    ├── RateLimited       429, 529 (overloaded), in-stream rate-limit / overloaded errors   retried
    ├── ProviderTimeout   connect, stall (read), write and pool timeouts                     retried
    └── ProviderError     408, 409, 5xx, dropped connections, truncated streams              retried
                          400, 401, 403, 404, 422 and every other 4xx: the request is wrong  not retried

The retry loop turns the last `AttemptFailed` into `kind(message)` chained to the original httpx
exception. Messages carry the status and the provider's own error text, with the key redacted.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from runner.errors import InfrastructureError, ProviderError, ProviderTimeout, RateLimited
from runner.providers.headers import server_wait
from runner.providers.secret import Secret
from simulators.protocol import JSON

__all__ = ["AttemptFailed", "check_status", "classify_status", "parse_json_object", "stream_error", "transport_failure"]

_ERROR_BODY_LIMIT = 4096
_TIMEOUT_WHAT: dict[type[httpx.TimeoutException], str] = {
    httpx.ConnectTimeout: "connecting",
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


class AttemptFailed(Exception):
    def __init__(self, kind: type[InfrastructureError], message: str, *, retryable: bool,
                 server_wait: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.server_wait = server_wait
        self.status = status


def classify_status(status: int) -> tuple[type[InfrastructureError], bool]:
    """The error kind of an HTTP status and whether trying again can help."""
    if status in (429, 529):
        return RateLimited, True
    if status in (408, 409) or status >= 500:
        return ProviderError, True
    return ProviderError, False


async def check_status(response: httpx.Response, secret: Secret, now: float) -> None:
    """Raise `AttemptFailed` (chained to an `httpx.HTTPStatusError`) unless the status is 2xx."""
    if response.is_success:
        return
    status = response.status_code
    body = await _read_bounded(response)
    kind, retryable = classify_status(status)
    detail = secret.redact(_error_text(body))
    wait = server_wait(response.headers, now) if retryable else None
    cause = httpx.HTTPStatusError(f"HTTP {status} from {secret.redact(str(response.request.url))}",
                                  request=response.request, response=response)
    raise AttemptFailed(kind, f"HTTP {status}: {detail}", retryable=retryable, server_wait=wait,
                        status=status) from cause


def stream_error(payload: JSON, secret: Secret) -> AttemptFailed:
    """An error the provider sent inside a 200 stream (OpenRouter chunks, Anthropic `error` events)."""
    error = payload.get("error", payload) if isinstance(payload, dict) else {}
    error = error if isinstance(error, dict) else {"message": str(error)}
    code = error.get("code")
    status = code if isinstance(code, int) else _ERROR_TYPE_STATUS.get(str(error.get("type")), 500)
    kind, retryable = classify_status(status)
    message = secret.redact(str(error.get("message") or error.get("type") or "error"))
    return AttemptFailed(kind, f"error in stream ({status}): {message}", retryable=retryable, status=status)


def parse_json_object(text: str) -> dict[str, Any]:
    """A JSON object from the provider; anything else is a (retryable) garbled response."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise AttemptFailed(ProviderError, "the provider sent malformed JSON", retryable=True) from exc
    if not isinstance(data, dict):
        raise AttemptFailed(ProviderError, "the provider sent JSON that is not an object", retryable=True)
    return data


def transport_failure(exc: httpx.HTTPError, secret: Secret) -> AttemptFailed:
    if isinstance(exc, httpx.TimeoutException):
        what = _TIMEOUT_WHAT.get(type(exc), "waiting")
        return AttemptFailed(ProviderTimeout, f"timed out {what}", retryable=True)
    # A wrong scheme in base_url will not fix itself; anything else on the wire might.
    retryable = not isinstance(exc, httpx.UnsupportedProtocol)
    detail = secret.redact(str(exc)) or "no detail"
    return AttemptFailed(ProviderError, f"{type(exc).__name__}: {detail}", retryable=retryable)


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

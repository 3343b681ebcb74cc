"""HTTP/1.1 framing for the mock provider: request heads parsed, status lines, JSON bodies, chunks of a
streamed body, a stall that sends nothing, and a failure in each dialect's error shape. Written by hand
on anyio streams so a test can break the framing on purpose (stall mid-stream, end a body early)."""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus

import anyio
import anyio.abc
import orjson

from bench.mock_types import JSON, Failure, Recorded

__all__ = ["ANTHROPIC_ERROR_TYPES", "CONNECTION_ERRORS", "MAX_HEAD", "chunk", "failure_bytes", "head", "http",
           "parse_head", "stall"]

MAX_HEAD = 64 * 1024
_STALL_LIMIT_S = 60.0
CONNECTION_ERRORS = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError,
                     anyio.ClosedResourceError, anyio.DelimiterNotFound, ConnectionError)
ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          529: "overloaded_error"}


def parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return method, path, headers


def head(status: int, headers: Mapping[str, str]) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Overloaded" if status == 529 else "Error"
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def http(status: int, body: JSON, headers: Mapping[str, str]) -> bytes:
    payload = orjson.dumps(body)
    fields = {"content-type": "application/json", "content-length": str(len(payload)), **headers}
    return head(status, fields) + payload


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def stall(stream: anyio.abc.ByteStream) -> None:
    # Silent until the client hangs up (its stall timeout), bounded so a test can never hang on it.
    with anyio.move_on_after(_STALL_LIMIT_S):
        try:
            await stream.receive()
        except CONNECTION_ERRORS:
            pass


def failure_bytes(request: Recorded, failure: Failure) -> bytes:
    headers = dict(failure.headers)
    if failure.retry_after is not None:
        headers["retry-after"] = failure.retry_after
    if failure.body is not None:
        body: JSON = failure.body
    elif request.dialect == "anthropic":
        kind = ANTHROPIC_ERROR_TYPES.get(failure.status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": failure.message}}
    else:
        body = {"error": {"message": failure.message, "type": "mock_error", "code": failure.status}}
    return http(failure.status, body, headers)

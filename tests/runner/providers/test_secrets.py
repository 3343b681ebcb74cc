"""API keys never show: not in str/repr of the errors, their chained causes, formatted tracebacks
(even with frame locals), nor in the clients' reprs, even when the provider echoes the key back."""

from __future__ import annotations

import socket
import traceback
from collections.abc import Callable

import httpx
import pytest

from bench.mock_provider import Failure, Recorded, Reply, Response, serve_mock
from runner.providers import HttpSettings, Secret, make_http_client
from runner.providers.taxonomy import InfrastructureError
from tests.runner.providers.support import KEY, anthropic_client, fast_retrier, openai_client, request

Build = Callable[..., object]


def _echo_key(status: int) -> Callable[[Recorded], Response]:
    """A provider that quotes the key it was sent in its error message, as some do."""

    def respond(sent: Recorded) -> Response:
        seen = sent.headers.get("x-api-key") or sent.headers.get("authorization", "")
        return Failure(status, message=f"Incorrect API key provided: {seen}")

    return respond


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _assert_no_key(exc: BaseException) -> None:
    texts = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    texts += [str(e) + repr(e) for e in _chain(exc)]
    texts.append("".join(traceback.TracebackException.from_exception(exc, capture_locals=True).format()))
    for text in texts:
        assert KEY not in text
    assert len(_chain(exc)) >= 2, "the original error is chained"


@pytest.mark.parametrize("client", [openai_client, anthropic_client])
@pytest.mark.parametrize("status", [401, 403, 500])
async def test_http_errors_do_not_leak_the_key(client: Build, status: int) -> None:
    async with serve_mock(_echo_key(status)) as mock, make_http_client() as http:
        with pytest.raises(InfrastructureError) as caught:
            await client(mock.base_url, http, fast_retrier(max_attempts=2)).respond(request())  # type: ignore[attr-defined]
    assert "Incorrect API key provided: " in str(caught.value)
    assert mock.requests[0].headers.get("x-api-key", mock.requests[0].headers.get("authorization", "")).endswith(KEY)
    _assert_no_key(caught.value)


@pytest.mark.parametrize("client", [openai_client, anthropic_client])
async def test_timeouts_and_refused_connections_do_not_leak_the_key(client: Build) -> None:
    settings = HttpSettings(stall_timeout_s=0.1, connect_timeout_s=1)
    async with serve_mock() as mock, make_http_client(settings) as http:
        mock.script(Reply(stall_after=1), Reply(stall_after=1))
        with pytest.raises(InfrastructureError) as stalled:
            await client(mock.base_url, http, fast_retrier(max_attempts=2)).respond(request())  # type: ignore[attr-defined]
        _assert_no_key(stalled.value)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed_port = probe.getsockname()[1]
        with pytest.raises(InfrastructureError) as refused:
            await client(f"http://127.0.0.1:{closed_port}", http,  # type: ignore[attr-defined]
                         fast_retrier(max_attempts=2)).respond(request())
        _assert_no_key(refused.value)


async def test_reprs_do_not_show_the_key() -> None:
    secret = Secret(KEY)
    assert KEY not in repr(secret) and KEY not in str(secret) and KEY not in f"{secret}"
    async with make_http_client() as http:
        for client in (openai_client("http://127.0.0.1:9", http), anthropic_client("http://127.0.0.1:9", http)):
            assert KEY not in repr(client) and KEY not in repr(vars(client))
    assert KEY not in repr(httpx.Headers({"content-type": "application/json"}))

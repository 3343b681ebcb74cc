"""The network streams under `make_http_client` (runner/providers/sockets.py), against real loopback
servers: they are in use (asyncio and uvloop), and TLS, big replies, big requests, timeouts and a
connection reset behave and fail as httpcore's own anyio streams do (the same httpx errors)."""

from __future__ import annotations

import shutil
import socket
import ssl
import struct
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import httpx
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.tls import TLSListener

from bench.mock_provider import serve_mock
from runner.providers import HttpSettings, make_http_client
from runner.providers.connections import LeanTransport
from runner.providers.sockets import LeanBackend, LeanStream

Handler = Callable[[anyio.abc.SocketStream], Awaitable[None]]


@asynccontextmanager
async def _server(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    listener: anyio.abc.Listener[anyio.abc.ByteStream]
    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = tcp.extra(anyio.abc.SocketAttribute.local_port)
    listener = TLSListener(tcp, tls, standard_compatible=False) if tls else tcp

    async def guarded(stream: anyio.abc.ByteStream) -> None:
        try:
            async with stream:
                await handler(stream)  # type: ignore[arg-type]
        except (anyio.BrokenResourceError, anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError, OSError):
            pass  # the client went away

    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, guarded)
        yield port
        group.cancel_scope.cancel()


async def _read_request(stream: anyio.abc.ByteStream) -> bytes:
    reader = BufferedByteReceiveStream(stream)
    head = await reader.receive_until(b"\r\n\r\n", 65536)
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    return await reader.receive_exactly(length) if length else b""


def _ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


async def _echo(stream: anyio.abc.SocketStream) -> None:
    while True:
        body = await _read_request(stream)
        await stream.send(_ok(b"got %d bytes" % len(body)))


def test_connections_run_on_lean_streams_under_asyncio_and_uvloop() -> None:
    async def check() -> None:
        async with serve_mock() as mock:
            port = int(mock.base_url.rsplit(":", 1)[1])
            stream = await LeanBackend().connect_tcp("127.0.0.1", port, timeout=5)
            assert isinstance(stream, LeanStream)  # not anyio's: the transport was taken over
            await stream.aclose()
            async with make_http_client() as http:
                response = await http.post(mock.base_url + "/v1/chat/completions",
                                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
                assert response.status_code == 200
                assert response.json()["choices"][0]["message"]["content"]

    anyio.run(check)
    anyio.run(check, backend_options={"use_uvloop": True})


async def test_a_reply_bigger_than_the_read_buffer_arrives_whole() -> None:
    big = bytes(range(256)) * (3 * 4096 + 7)  # ~3 MB: reading pauses and resumes on the way

    async def handler(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await stream.send(_ok(big))

    async with _server(handler) as port, make_http_client() as http:
        response = await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")
        assert response.content == big


async def test_a_request_bigger_than_the_socket_buffers_is_sent_whole() -> None:
    body = b"x" * (16 << 20)  # the kernel cannot take it at once: the write waits for the reader
    async with _server(_echo) as port, make_http_client() as http:
        for _ in range(2):  # and the connection is reused after it
            response = await http.post(f"http://127.0.0.1:{port}/x", content=body)
            assert response.content == b"got %d bytes" % len(body)


async def test_a_silent_server_is_a_read_timeout() -> None:
    async def silent(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await anyio.sleep_forever()

    async with _server(silent) as port, make_http_client(HttpSettings(stall_timeout_s=0.3)) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")


async def test_a_server_that_never_reads_is_a_write_timeout() -> None:
    with socket.socket() as deaf:  # listening, never accepting: the kernel's buffers fill and stay full
        deaf.bind(("127.0.0.1", 0))
        deaf.listen(4)
        port = deaf.getsockname()[1]
        async with make_http_client(HttpSettings(write_timeout_s=0.3)) as http:
            with pytest.raises(httpx.WriteTimeout):
                await http.post(f"http://127.0.0.1:{port}/x", content=b"x" * (64 << 20))


async def test_a_connection_reset_mid_reply_is_a_read_error() -> None:
    async def reset(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\npartial")
        await anyio.sleep(0.1)
        raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
        await stream.aclose()

    async with _server(reset) as port, make_http_client() as http:
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")
        # and the pool goes on: the next request opens a new connection
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")


async def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: connecting is refused
        async with make_http_client() as http:
            with pytest.raises(httpx.ConnectError):
                await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


async def test_https_through_the_lean_streams(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
    async with _server(_echo, tls=server_tls) as port:
        url = f"https://127.0.0.1:{port}/x"
        async with httpx.AsyncClient(transport=LeanTransport(limits, ssl_context=trusting)) as http:
            for size in (2, 3 << 20):  # a small request, then one bigger than the TLS and socket buffers
                response = await http.post(url, content=b"y" * size)
                assert response.content == b"got %d bytes" % size
        async with make_http_client() as http:  # the default roots do not trust our certificate
            with pytest.raises(httpx.ConnectError):
                await http.post(url, content=b"{}")


async def test_a_cookie_the_server_sets_goes_back_and_replies_without_one_keep_it() -> None:
    """Cookie handling is skipped for replies that set none; one that does is kept and sent back."""
    seen: list[bytes] = []

    async def affinity(stream: anyio.abc.SocketStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        for index in range(3):
            head = await reader.receive_until(b"\r\n\r\n", 65536)
            lines = head.lower().split(b"\r\n")
            seen.append(next((line for line in lines if line.startswith(b"cookie:")), b""))
            cookie = b"set-cookie: affinity=replica-2; Path=/\r\n" if index == 0 else b""
            await stream.send(b"HTTP/1.1 200 OK\r\n%scontent-length: 2\r\n\r\nok" % cookie)

    async with _server(affinity) as port, make_http_client() as http:
        for _ in range(3):
            assert (await http.get(f"http://127.0.0.1:{port}/x")).content == b"ok"
        assert http.cookies.get("affinity") == "replica-2"
    assert seen == [b"", b"cookie: affinity=replica-2", b"cookie: affinity=replica-2"]


async def test_a_server_that_hangs_up_right_after_each_reply_costs_no_request() -> None:
    """The hang-up can still be in the kernel, unseen by the loop, when the next request picks the
    connection: the idle check asks the socket too, so that request opens a new connection instead."""

    async def one_each(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await stream.send(_ok(b"once"))  # and close, without `connection: close`

    async with _server(one_each) as port, make_http_client() as http:
        for _ in range(20):
            assert (await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")).content == b"once"

"""The one place an `httpx.AsyncClient` is built, with timeouts and pool limits set on purpose.

httpx's defaults (5 s for everything, 100 connections) are wrong for LLM calls: a model may think
for a minute before its first byte, and the pool should match the concurrency we allow the
endpoint, not exceed it. The read timeout is the stall timeout: it fires when no byte arrived for
that long, which is how a stream that stops midway ends its attempt.

The connection pool is our `LeanPool` (runner/providers/connections.py): httpcore's own re-scans every
connection on each request and response, which cost more CPU than the rest of a model call. With a
proxy set in the environment (HTTPS_PROXY and friends) httpx's stock transport is kept, since it is
what honours those settings.
"""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from typing import Any

import httpx

from runner.providers.connections import LeanTransport

__all__ = ["HttpSettings", "make_http_client"]


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, minus its work for the responses that set no cookie (every model call's, as a
    rule): httpx hands each response to `http.cookiejar` through urllib request and email message copies,
    ~15 µs a call. A response that does set one (a load balancer's affinity cookie) is stored as before."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers or "set-cookie2" in response.headers:
            super().extract_cookies(response)


class _Client(httpx.AsyncClient):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)  # keeps its own jar in a private field; ours replaces it
        self._jar = _Cookies(options.get("cookies"))

    @property
    def cookies(self) -> httpx.Cookies:
        return self._jar

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._jar = _Cookies(cookies)


@dataclass(frozen=True)
class HttpSettings:
    connect_timeout_s: float = 10.0
    stall_timeout_s: float = 120.0
    """No byte for this long (before the first one or mid-stream) fails the attempt."""
    write_timeout_s: float = 30.0
    pool_timeout_s: float = 60.0
    """Waiting for a free connection; the rate limiter already caps calls, so this is a safety net."""
    max_connections: int = 32
    """Size it to the endpoint's concurrency ceiling: more connections than calls is waste."""
    keepalive_expiry_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")


def make_http_client(settings: HttpSettings = HttpSettings()) -> httpx.AsyncClient:
    timeout = httpx.Timeout(
        connect=settings.connect_timeout_s,
        read=settings.stall_timeout_s,
        write=settings.write_timeout_s,
        pool=settings.pool_timeout_s,
    )
    limits = httpx.Limits(
        max_connections=settings.max_connections,
        max_keepalive_connections=settings.max_connections,
        keepalive_expiry=settings.keepalive_expiry_s,
    )
    # Redirects are not followed: a redirected POST would resend the key to wherever it points.
    if _proxied():
        return _Client(timeout=timeout, limits=limits, follow_redirects=False)
    return _Client(timeout=timeout, transport=LeanTransport(limits), follow_redirects=False)


def _proxied() -> bool:
    """A proxy configured in the environment (httpx reads the same variables through urllib)."""
    return any(scheme in ("http", "https", "all") for scheme in urllib.request.getproxies())

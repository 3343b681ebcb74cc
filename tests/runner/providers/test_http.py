"""The http client factory sets every timeout and the pool size on purpose; the package's public names."""

from __future__ import annotations

import runner.providers
from runner.providers import HttpSettings, make_http_client
from runner.providers.connections import LeanPool


async def test_timeouts_and_limits_are_explicit() -> None:
    settings = HttpSettings(connect_timeout_s=3, stall_timeout_s=45, write_timeout_s=7, pool_timeout_s=9,
                            max_connections=12)
    async with make_http_client(settings) as http:
        assert (http.timeout.connect, http.timeout.read, http.timeout.write, http.timeout.pool) == (3, 45, 7, 9)
        pool = http._transport._pool  # type: ignore[attr-defined]
        assert isinstance(pool, LeanPool) and pool.max_connections == 12
        assert http.follow_redirects is False


def test_public_api_is_pinned() -> None:
    assert sorted(runner.providers.__all__) == [
        "AnthropicClient", "HttpSettings", "OpenAICompatClient", "RateLimiter", "RateLimits", "Retrier",
        "RetryNotice", "RetryPolicy", "Secret", "make_http_client",
    ]
    # Each name is the defining module's own object, re-exported (not a copy, not a stand-in).
    for name in runner.providers.__all__:
        exported = getattr(runner.providers, name)
        assert exported.__module__.startswith("runner.providers.") and exported.__name__ == name

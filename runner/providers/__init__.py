"""Real model clients over HTTP: OpenAI-compatible chat completions and Anthropic Messages.

    http.py           the httpx.AsyncClient factory (explicit timeouts and pool limits)
    secret.py         API keys that never print
    retry.py          the one retry loop (tenacity): backoff, server-asked waits, attempt timeout, deadline
    failures.py       httpx errors, statuses and in-stream errors classified where they enter
    headers.py        Retry-After and rate-limit headers read into numbers
    ratelimit.py      per-endpoint request/token buckets and adaptive (AIMD) concurrency
    endpoint.py       one attempt: rate-limit slot, POST, status check, read
    openai_compat.py  OpenAICompatClient
    anthropic.py      AnthropicClient
    batch_api.py      a batch API as the runner sees it (items, status, results, cancel)
    batch_http.py     a batch API's HTTP calls through the retry loop and taxonomy; `BatchTarget`
    batch_openai.py   OpenAIBatches: /v1/files + /v1/batches (OpenAI and compatible servers)
    batch_anthropic.py AnthropicBatches: /v1/messages/batches
    batch_probe.py    whether an endpoint offers a batch API (`probe --full`'s batch API row)
    batch_backends.py the batch backend for a live client (`batch_backend(client)`)

Build one `httpx.AsyncClient` and one `RateLimiter` per endpoint and share them between the clients
that call it; the caller owns the http client and closes it.

Arrows: providers -> common (the episode age a call slot is ordered by). The clients know HTTP and the model
API of `simulators`, nothing of a run.
"""

from __future__ import annotations

from runner.providers.anthropic import AnthropicClient as AnthropicClient
from runner.providers.http import HttpSettings as HttpSettings
from runner.providers.http import make_http_client as make_http_client
from runner.providers.openai_compat import OpenAICompatClient as OpenAICompatClient
from runner.providers.ratelimit import RateLimiter as RateLimiter
from runner.providers.ratelimit import RateLimits as RateLimits
from runner.providers.retry import Retrier as Retrier
from runner.providers.retry import RetryNotice as RetryNotice
from runner.providers.retry import RetryPolicy as RetryPolicy
from runner.providers.secret import Secret as Secret

__all__ = [
    "AnthropicClient",
    "HttpSettings",
    "OpenAICompatClient",
    "RateLimiter",
    "RateLimits",
    "Retrier",
    "RetryNotice",
    "RetryPolicy",
    "Secret",
    "make_http_client",
]

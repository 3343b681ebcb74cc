"""Model clients built from the names a user gives.

    scripted, scripted:docs, scripted:noisy=P  the offline scripted agent (free, in-process)
    openai:<model>                             OPENAI_API_KEY
    anthropic:<model>                          ANTHROPIC_API_KEY
    openrouter:<vendor>/<model>                OPENROUTER_API_KEY
    together:<model>, fireworks:<model>        TOGETHER_API_KEY, FIREWORKS_API_KEY
    openai-compatible:<model>@<base url>       OPENAI_COMPATIBLE_API_KEY if set (vLLM, Ollama, ...)
    <name>                                     a named endpoint of the sweep file ([endpoints.<name>]);
                                               `base_urls` / `api_key_envs` make it a pool of replicas

(The names and endpoint tables are parsed in `runner.models.endpoints`.) Keys are read from the environment
only, held masked (`Secret`), and never written anywhere. One HTTP
connection pool, one rate limiter and one circuit breaker per endpoint (`Pool`), shared by every client
that calls it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.pricing import price_of, unpriced, with_overrides
from runner.models.capped import DEFAULT_MAX_TOKENS
from runner.models.endpoints import KINDS, Endpoint, endpoint_of, named_endpoint, sends_prompt_cache_key
from runner.models.scripted import ScriptedModel
from runner.providers import (
    AnthropicClient,
    HttpSettings,
    OpenAICompatClient,
    RateLimiter,
    Retrier,
    RetryNotice,
    RetryPolicy,
    Secret,
    make_http_client,
)
from runner.providers.breaker import BreakerPolicy, CircuitBreaker
from runner.providers.ledger import RequestLedger
from runner.providers.pool import Replica, Router
from runner.providers.prompt_cache import StreamCadence
from runner.providers.server_queue import ServerQueue
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelClient

__all__ = ["CallSettings", "ModelEntry", "RetryTally", "build_model", "build_models",
           "close_models", "model_prices"]


PROBE_POLICY = RetryPolicy(max_attempts=2, attempt_timeout_s=60.0, deadline_s=90.0, backoff_initial_s=0.5,
                           backoff_max_s=2.0)

BREAKER_FIRST_PROBE_S = 2.0
BREAKER_MAX_PROBE_INTERVAL_S = 60.0
SWEEP_POLICY = RetryPolicy()
"""The retry timing of a sweep's calls (the attempt bound comes from the sweep's `max_request_attempts`)."""

@dataclass(frozen=True)
class ModelEntry:
    name: str
    client: ModelClient
    offline: bool
    """In-process and free: its calls are neither cached nor journaled one by one."""
    max_attempts: int = 1
    """The most attempts the client makes per call (its retry limit)."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    """Output tokens per call at most: the sweep's `max_tokens`, or its endpoint's own."""
    key_hint: str = ""
    """Where its key comes from, for error messages (never the key)."""
    http: httpx.AsyncClient | None = None
    breaker: CircuitBreaker | None = None
    router: Router | None = None
    """Its endpoint pool, when the sweep file gives several base URLs or keys."""

    def breakers(self) -> list[CircuitBreaker]:
        """One per replica of a pool, else its endpoint's (none for an offline model): the dashboard's
        paused lines."""
        if self.router is not None:
            return [replica.breaker for replica in self.router.replicas]
        return [self.breaker] if self.breaker is not None else []
    probe: ModelClient | None = None
    """The same model behind a short retry policy: a probe should fail in seconds, not after the
    minutes of backoff a sweep's calls are allowed."""
    kind: str = ""
    """Its endpoint's kind (`openai-compatible`, ...); empty for an offline model."""
    max_concurrency: int = 0
    """Its endpoint's `max_concurrency` (per replica); 0 for an offline model."""


@dataclass
class RetryTally:
    """Retries and 429s seen by every provider client, for the dashboard."""

    retries: int = 0
    rate_limited: int = 0
    listeners: list[Callable[[RetryNotice], None]] = field(default_factory=list)

    def __call__(self, notice: RetryNotice) -> None:
        self.retries += 1
        self.rate_limited += notice.status == 429
        for listener in self.listeners:
            listener(notice)


@dataclass(frozen=True)
class Pool:
    """What every client of one endpoint shares."""

    http: httpx.AsyncClient
    limiter: RateLimiter
    breaker: CircuitBreaker
    router: Router | None = None
    queue: ServerQueue = field(default_factory=ServerQueue)
    """One endpoint's calls in flight and its server's slots (a pool's replicas have their own)."""


def build_models(config: SweepConfig, tally: RetryTally | None = None) -> dict[str, ModelEntry]:
    """Every model the sweep names (agents and the judge), built before anything is spent."""
    tally = tally or RetryTally()
    for name, table in config.endpoints.items():  # every endpoint, used or not: a typo is found at start
        named_endpoint(name, table)
    names = list(dict.fromkeys([*config.models, *([config.judge] if config.judge else [])]))
    pools: dict[str, Pool] = {}
    breaker = BreakerPolicy(failures_to_open=config.breaker_failures, give_up_after_s=config.endpoint_down_after_s,
                            first_probe_s=BREAKER_FIRST_PROBE_S, max_probe_interval_s=BREAKER_MAX_PROBE_INTERVAL_S)
    # One ledger for the run: a request body's attempts are bounded whichever client or layer sends it.
    ledger = RequestLedger(config.max_request_attempts)
    calls = CallSettings(max_tokens=config.max_tokens, temperature=config.temperature,
                         call_timeout_s=config.call_timeout)
    return {name: build_model(name, config.endpoints, tally, pools, calls=calls, ledger=ledger, breaker=breaker)
            for name in names}


@dataclass(frozen=True)
class CallSettings:
    """What the sweep sets for every call of its models (an endpoint's own `max_tokens` wins)."""

    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float | None = None
    """None: not sent (the provider's default)."""
    call_timeout_s: float = SWEEP_POLICY.attempt_timeout_s
    """One attempt's total time; the whole call's deadline leaves room for a retry of that length."""

    def policy(self, max_attempts: int) -> RetryPolicy:
        deadline = max(SWEEP_POLICY.deadline_s, 2 * self.call_timeout_s)
        return replace(SWEEP_POLICY, max_attempts=max_attempts, attempt_timeout_s=self.call_timeout_s,
                       deadline_s=deadline)


def build_model(name: str, endpoints: Mapping[str, Any] | None = None, tally: RetryTally | None = None,
                pools: dict[str, Pool] | None = None, *, calls: CallSettings = CallSettings(),
                ledger: RequestLedger | None = None, breaker: BreakerPolicy | None = None) -> ModelEntry:
    kind, _, rest = name.partition(":")
    if kind == "scripted":
        # In-process and deterministic: it has no sampling temperature and no call to time out.
        try:
            return ModelEntry(name, ScriptedModel(rest or "oracle"), offline=True, max_tokens=calls.max_tokens)
        except ValueError as exc:
            raise ShiftbenchInputError(f"--models: {exc}") from exc
    endpoint = endpoint_of(name, endpoints)
    _check_temperature(name, endpoint, calls.temperature)
    key = _key(name, endpoint, endpoint.key_env)
    pool = _pool(name, endpoint, pools if pools is not None else {}, breaker or BreakerPolicy())
    ledger = ledger or RequestLedger()
    policy = calls.policy(ledger.max_attempts)
    client = _client(name, endpoint, key, pool, Retrier(policy, on_retry=tally or RetryTally(), ledger=ledger),
                     calls.temperature)
    # The probe carries the temperature too: a model that refuses it is found before anything is spent.
    probe = _client(name, endpoint, key, pool, Retrier(PROBE_POLICY), calls.temperature)
    return ModelEntry(name, client, offline=False, max_attempts=policy.max_attempts,
                      max_tokens=endpoint.max_tokens or calls.max_tokens, key_hint=f"${endpoint.key_env}",
                      http=pool.http, probe=probe, breaker=pool.breaker, router=pool.router, kind=endpoint.kind,
                      max_concurrency=endpoint.limits.max_concurrency)


def _check_temperature(name: str, endpoint: Endpoint, temperature: float | None) -> None:
    if temperature is None or endpoint.kind != "anthropic":
        return
    if temperature > 1:
        raise ShiftbenchInputError(f"temperature: Anthropic models take 0 to 1, got {temperature:g} for '{name}'")
    if endpoint.extra.get("thinking_budget"):
        raise ShiftbenchInputError(f"temperature: '{name}' thinks (thinking_budget), and Anthropic refuses a "
                                   "temperature with extended thinking; drop one of them")


def _key(name: str, endpoint: Endpoint, key_env: str) -> Secret:
    value = os.environ.get(key_env, "")
    if not value and (KINDS[endpoint.kind].key_required or key_env != KINDS[endpoint.kind].key_env):
        raise ShiftbenchInputError(f"--models: '{name}' needs its API key in the environment variable "
                                   f"{key_env}; set it and run again (keys are read from the "
                                   "environment only and never written anywhere)")
    return Secret(value or "none")


def _pool(name: str, endpoint: Endpoint, pools: dict[str, Pool], breaker: BreakerPolicy) -> Pool:
    replicas = endpoint.replicas or ((endpoint.base_url, endpoint.key_env),)
    key = " ".join(f"{url}|{env}" for url, env in replicas)
    if key not in pools:
        settings = HttpSettings(max_connections=endpoint.limits.max_concurrency * len(replicas))
        pools[key] = _new_pool(name, endpoint, replicas, settings, breaker)
    return pools[key]


def _new_pool(name: str, endpoint: Endpoint, replicas: tuple[tuple[str, str], ...], settings: HttpSettings,
              breaker: BreakerPolicy) -> Pool:
    if not endpoint.replicas:
        return Pool(make_http_client(settings), RateLimiter(endpoint.limits),
                    CircuitBreaker(breaker, label=endpoint.base_url))
    # Several keys on one URL are told apart by the key's variable (never the key).
    urls = {url for url, _ in replicas}
    members = []
    for url, env in replicas:
        label = url if len(urls) == len(replicas) else f"{url} ({env})"
        # The pool gives up when all its replicas have, so none gives up alone (see runner.providers.pool).
        members.append(Replica(label, url, RateLimiter(endpoint.limits),
                               CircuitBreaker(breaker, label=label, gives_up=False), _key(name, endpoint, env)))
    router = Router(members, label=name)
    return Pool(make_http_client(settings), members[0].limiter, members[0].breaker, router, members[0].queue)


def _client(name: str, endpoint: Endpoint, key: Secret, pool: Pool, retrier: Retrier,
            temperature: float | None) -> ModelClient:
    extra_body = endpoint.extra.get("extra_body")
    if endpoint.kind == "anthropic":
        ttl = endpoint.extra.get("cache_ttl", "auto")
        return AnthropicClient(endpoint.model, api_key=key, http=pool.http, base_url=endpoint.base_url, name=name,
                               retrier=retrier, limiter=pool.limiter, breaker=pool.breaker, router=pool.router,
                               queue=pool.queue, extra_body=extra_body,
                               thinking_budget=endpoint.extra.get("thinking_budget"),
                               cadence=StreamCadence(fixed=None if ttl == "auto" else ttl), temperature=temperature)
    return OpenAICompatClient(endpoint.model, base_url=endpoint.base_url, api_key=key, http=pool.http, name=name,
                              retrier=retrier, limiter=pool.limiter, breaker=pool.breaker, router=pool.router,
                              queue=pool.queue, extra_body=extra_body, stream=bool(endpoint.extra.get("stream", True)),
                              cache_key=sends_prompt_cache_key(endpoint.kind, endpoint.extra), temperature=temperature)


async def close_models(entries: Mapping[str, ModelEntry]) -> None:
    for http in {id(e.http): e.http for e in entries.values() if e.http is not None}.values():
        await http.aclose()


def model_prices(config: SweepConfig, entries: Mapping[str, ModelEntry]) -> dict[str, Price | None]:
    """Each model's price (the shipped table with the sweep file's overrides). A model with no price is
    refused unless the sweep allows unpriced models: a budget cannot cap what it cannot price."""
    table = with_overrides(config.prices, "sweep file [prices]")
    missing = unpriced([n for n, e in entries.items() if not e.offline], table)
    if missing and not config.allow_unpriced:
        raise ShiftbenchInputError(f"--models: no price known for {', '.join(missing)}; add "
                                   f'[prices."{missing[0]}"] to the sweep file or pass --allow-unpriced')
    return {name: price_of(name, table) for name in entries}

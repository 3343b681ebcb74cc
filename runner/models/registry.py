"""Model clients built from the names a user gives.

    scripted, scripted:docs, scripted:noisy=P  the offline scripted agent (free, in-process)
    openai:<model>                             OPENAI_API_KEY
    anthropic:<model>                          ANTHROPIC_API_KEY
    openrouter:<vendor>/<model>                OPENROUTER_API_KEY
    together:<model>, fireworks:<model>        TOGETHER_API_KEY, FIREWORKS_API_KEY
    openai-compatible:<model>@<base url>       OPENAI_COMPATIBLE_API_KEY if set (vLLM, Ollama, ...)
    <name>                                     a named endpoint of the sweep file ([endpoints.<name>]);
                                               `base_urls` / `api_key_envs` make it a pool of replicas

Keys are read from the environment only, held masked (`Secret`), and never written anywhere. One HTTP
connection pool, one rate limiter and one circuit breaker per endpoint (`Pool`), shared by every client
that calls it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from runner.common.toml_tables import suggestion
from runner.config.endpoint_keys import check_endpoint_keys
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.pricing import price_of, unpriced, with_overrides
from runner.models.capped import DEFAULT_MAX_TOKENS
from runner.models.scripted import ScriptedModel
from runner.providers import (
    AnthropicClient,
    HttpSettings,
    OpenAICompatClient,
    RateLimiter,
    RateLimits,
    Retrier,
    RetryNotice,
    RetryPolicy,
    Secret,
    make_http_client,
)
from runner.providers.breaker import BreakerPolicy, CircuitBreaker
from runner.providers.endpoint import EXTRA_SCOPES
from runner.providers.ledger import RequestLedger
from runner.providers.pool import Replica, Router
from runner.providers.prompt_cache import StreamCadence
from runner.providers.server_queue import ServerQueue
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelClient

__all__ = ["KINDS", "CallSettings", "Endpoint", "ModelEntry", "RetryTally", "build_model", "build_models",
           "close_models", "endpoint_of", "model_prices"]


@dataclass(frozen=True)
class Kind:
    base_url: str
    key_env: str
    key_required: bool = True


KINDS: dict[str, Kind] = {
    "openai": Kind("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": Kind("https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    "openrouter": Kind("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "together": Kind("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": Kind("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "openai-compatible": Kind("", "OPENAI_COMPATIBLE_API_KEY", key_required=False),
}

PROBE_POLICY = RetryPolicy(max_attempts=2, attempt_timeout_s=60.0, deadline_s=90.0, backoff_initial_s=0.5,
                           backoff_max_s=2.0)

BREAKER_FIRST_PROBE_S = 2.0
BREAKER_MAX_PROBE_INTERVAL_S = 60.0
SWEEP_POLICY = RetryPolicy()
"""The retry timing of a sweep's calls (the attempt bound comes from the sweep's `max_request_attempts`)."""

CACHE_TTLS = ("auto", "5m", "1h")
"""An Anthropic endpoint's `cache_ttl`: "auto" (per stream, from how often its requests come) or fixed."""


def sends_prompt_cache_key(kind: str, extra: Mapping[str, Any]) -> bool:
    """OpenAI takes `prompt_cache_key`; other servers only when the sweep file says so (a strict server
    refuses a field it does not know)."""
    return bool(extra.get("prompt_cache_key", kind == "openai"))


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


@dataclass(frozen=True)
class Endpoint:
    kind: str
    model: str
    base_url: str
    key_env: str
    limits: RateLimits
    extra: Mapping[str, Any]
    max_tokens: int | None = None
    replicas: tuple[tuple[str, str], ...] = ()
    """An endpoint pool's (base URL, key variable) pairs; empty for one endpoint."""


def build_models(config: SweepConfig, tally: RetryTally | None = None) -> dict[str, ModelEntry]:
    """Every model the sweep names (agents and the judge), built before anything is spent."""
    tally = tally or RetryTally()
    for name, table in config.endpoints.items():  # every endpoint, used or not: a typo is found at start
        _named_endpoint(name, table)
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
    endpoint = _endpoint(name, endpoints or {})
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


def endpoint_of(name: str, endpoints: Mapping[str, Any] | None = None) -> Endpoint:
    """Where a model name points: kind, provider model id, base URL (for `probe --full`'s settings)."""
    return _endpoint(name, endpoints or {})


def _endpoint(name: str, endpoints: Mapping[str, Any]) -> Endpoint:
    if name in endpoints:
        return _named_endpoint(name, endpoints[name])
    kind, sep, model = name.partition(":")
    if not sep or kind not in KINDS or not model:
        known = ", ".join(["scripted", "scripted:docs", *(f"{k}:<model>" for k in KINDS)])
        raise ShiftbenchInputError(f"--models: unknown model kind '{kind}' in '{name}'; use one of {known}, "
                                   "or a named endpoint of the sweep file")
    base_url = KINDS[kind].base_url
    if kind == "openai-compatible":
        model, at, base_url = model.partition("@")
        if not at or not base_url.startswith(("http://", "https://")):
            raise ShiftbenchInputError(f"--models: '{name}' needs a base URL: openai-compatible:<model>@http://host:port/v1")
    return Endpoint(kind, model, base_url, KINDS[kind].key_env, RateLimits(), {})


def _named_endpoint(name: str, table: Any) -> Endpoint:
    where = f"sweep file [endpoints.{name}]"
    check_endpoint_keys(where, table)
    _check_types(where, table)
    kind = str(table.get("kind", ""))
    if kind not in KINDS:
        raise ShiftbenchInputError(f"{where}: kind must be one of {', '.join(KINDS)}")
    if not table.get("model"):
        raise ShiftbenchInputError(f"{where}: model is required (the provider's model id)")
    replicas = _replicas(where, table, kind)
    base_url, key_env = replicas[0]
    limits = RateLimits(requests_per_minute=_rate(where, table, "requests_per_minute"),
                        tokens_per_minute=_rate(where, table, "tokens_per_minute"),
                        max_concurrency=_count(where, table, "max_concurrency", 32, 100_000))
    max_tokens = _count(where, table, "max_tokens", 1, 10_000_000) if "max_tokens" in table else None
    extra = {k: table[k] for k in ("extra_body", "thinking_budget", "stream", "prompt_cache_key", "cache_ttl")
             if k in table}
    _check_extra_body(where, extra.get("extra_body"))
    return Endpoint(kind, str(table["model"]), base_url, key_env, limits, extra, max_tokens,
                    tuple(replicas) if len(replicas) > 1 else ())


def _replicas(where: str, table: Mapping[str, Any], kind: str) -> list[tuple[str, str]]:
    """(base URL, key variable) per replica: `base_urls` (each with `api_key_env`), `api_key_envs` (each on
    the one base URL: several keys' quotas), or both, paired in order."""
    for one, many in (("base_url", "base_urls"), ("api_key_env", "api_key_envs")):
        if one in table and many in table:
            raise ShiftbenchInputError(f"{where}: give {one} or {many}, not both")
    urls = _strings(where, table, "base_urls") or [str(table.get("base_url") or KINDS[kind].base_url)]
    envs = _strings(where, table, "api_key_envs") or [str(table.get("api_key_env") or KINDS[kind].key_env)]
    for url in urls:
        if not url.startswith(("http://", "https://")):
            key = "base_urls" if "base_urls" in table else "base_url"
            raise ShiftbenchInputError(f"{where}: {key} must start with http:// or https://, got {url!r}")
    if len(urls) > 1 and len(envs) > 1 and len(urls) != len(envs):
        raise ShiftbenchInputError(f"{where}: base_urls has {len(urls)} entries and api_key_envs {len(envs)}; "
                                   "give one key variable per base URL, or a single api_key_env")
    pairs = list(zip(urls * (len(envs) if len(urls) == 1 else 1), envs * (len(urls) if len(envs) == 1 else 1),
                     strict=True))
    if len(set(pairs)) < len(pairs):
        raise ShiftbenchInputError(f"{where}: base_urls / api_key_envs name the same replica twice")
    return pairs


def _strings(where: str, table: Mapping[str, Any], key: str) -> list[str]:
    if key not in table:
        return []
    value = table[key]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ShiftbenchInputError(f"{where}: {key} must be a non-empty list of strings, got {value!r}")
    return list(value)


def _rate(where: str, table: Mapping[str, Any], key: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ShiftbenchInputError(f"{where}: {key} must be a positive number per minute, got {value!r}")
    return float(value)


def _count(where: str, table: Mapping[str, Any], key: str, default: int, high: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ShiftbenchInputError(f"{where}: {key} must be a whole number from 1 to {high}, got {value!r}")
    return value


_FIELD_KINDS: dict[str, tuple[type, str]] = {
    "model": (str, "a string"), "base_url": (str, "a string"), "api_key_env": (str, "a string"),
    "kind": (str, "a string"), "stream": (bool, "true or false"), "extra_body": (dict, "a table"),
    "prompt_cache_key": (bool, "true or false"),
}


def _check_types(where: str, table: Mapping[str, Any]) -> None:
    for key, (kind, what) in _FIELD_KINDS.items():
        if key in table and not isinstance(table[key], kind):
            raise ShiftbenchInputError(f"{where}: {key} must be {what}, got {table[key]!r}")
    ttl = table.get("cache_ttl", "auto")
    if ttl not in CACHE_TTLS:
        raise ShiftbenchInputError(f"{where}: cache_ttl must be one of {', '.join(map(repr, CACHE_TTLS))}, got {ttl!r}")
    budget = table.get("thinking_budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1024):
        raise ShiftbenchInputError(f"{where}: thinking_budget must be a whole number of tokens >= 1024, got {budget!r}")


def _check_extra_body(where: str, extra_body: Any) -> None:
    if extra_body is None:
        return
    if not isinstance(extra_body, Mapping):
        raise ShiftbenchInputError(f"{where}: extra_body must be a table of request fields")
    for key, value in extra_body.items():
        # A table under a name very close to a scope is a misspelt scope (`agnet`), not a request field; the
        # high cutoff keeps real table fields (OpenRouter's `provider`, `usage`) from being taken for one.
        scoped = isinstance(value, Mapping) and key not in EXTRA_SCOPES
        close = suggestion(str(key), EXTRA_SCOPES, cutoff=0.8) if scoped else ""
        if close:
            raise ShiftbenchInputError(f"{where}: extra_body.{key} is not a scope{close}; the scopes are "
                                       f"{', '.join(EXTRA_SCOPES)} (a table under another name is sent as a field)")
    for scope in EXTRA_SCOPES:
        if scope in extra_body and not isinstance(extra_body[scope], Mapping):
            raise ShiftbenchInputError(f"{where}: extra_body.{scope} must be a table ([endpoints.<name>."
                                       f"extra_body.{scope}]): its fields go on {scope} calls only")


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

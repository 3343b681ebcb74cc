"""Where a model name points: the provider kinds and their defaults, and the sweep file's named endpoints
(`[endpoints.<name>]`: kind, model, base URL or a pool's `base_urls` / `api_key_envs`, rate limits,
output cap, request fields), each value checked with the file and table it came from.

Parsing only: `runner.models.registry` turns an `Endpoint` into clients. Key variables are names here;
the keys themselves are read from the environment there, never here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.common.toml_tables import suggestion
from runner.config.endpoint_keys import check_endpoint_keys
from runner.providers import RateLimits
from runner.providers.endpoint import EXTRA_SCOPES
from simulators.errors import ShiftbenchInputError

__all__ = ["CACHE_TTLS", "KINDS", "Endpoint", "Kind", "check_endpoint_tables", "endpoint_of", "named_endpoint",
           "sends_prompt_cache_key"]


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

CACHE_TTLS = ("auto", "5m", "1h")
"""An Anthropic endpoint's `cache_ttl`: "auto" (per stream, from how often its requests come) or fixed."""


def sends_prompt_cache_key(kind: str, extra: Mapping[str, Any]) -> bool:
    """OpenAI takes `prompt_cache_key`; other servers only when the sweep file says so (a strict server
    refuses a field it does not know)."""
    return bool(extra.get("prompt_cache_key", kind == "openai"))


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


def endpoint_of(name: str, endpoints: Mapping[str, Any] | None = None) -> Endpoint:
    """Where a model name points: kind, provider model id, base URL (for `probe --full`'s settings)."""
    return _endpoint(name, endpoints or {})


def _endpoint(name: str, endpoints: Mapping[str, Any]) -> Endpoint:
    if name in endpoints:
        return named_endpoint(name, endpoints[name])
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


def check_endpoint_tables(source: Path, endpoints: Mapping[str, Any]) -> None:
    """Every `[endpoints.<name>]` of a sweep file, checked as it is read, so an error names the file."""
    for name, table in endpoints.items():
        named_endpoint(name, table, str(source))


def named_endpoint(name: str, table: Any, source: str = "sweep file") -> Endpoint:
    """A sweep file's `[endpoints.<name>]` table, checked whole (every endpoint is, used or not)."""
    where = f"{source} [endpoints.{name}]"
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

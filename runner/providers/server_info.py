"""What a local server publishes about itself: its parallel slots and its context, where it says them.

    llama.cpp   GET /props   {"total_slots": N, "default_generation_settings": {"n_ctx": C, ...}, ...}
                GET /slots   [{"id": 0, "n_ctx": C, "is_processing": false, ...}, ...] (one per slot;
                             off with --no-slots)
    vLLM        GET /v1/models  {"data": [{"id": ..., "max_model_len": C, ...}]}: the context only. vLLM
                             batches up to its --max-num-seqs and does not publish that number.

Asked by `probe --full` (to suggest `max_concurrency`) and at the start of a run (so time queued behind
the slots is not taken for a stalled stream, `runner.providers.server_queue`). Each question is one short
GET with the endpoint's own key; a server that answers none of them (a hosted API, a gateway) has
published nothing, which is never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import orjson

__all__ = ["ServerInfo", "parse_models", "parse_props", "parse_slots", "server_info"]

_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ServerInfo:
    slots: int | None = None
    """Requests the server works on at once; None: not published."""
    context_tokens: int | None = None
    """Its context per request (llama.cpp: per slot), when published."""
    source: str = ""
    """Where the slots (else the context) were read, e.g. "llama.cpp /props"; empty: nothing published."""


def parse_props(data: Any) -> ServerInfo | None:
    """llama.cpp's /props."""
    if not isinstance(data, dict) or not _count(data.get("total_slots")):
        return None
    settings = data.get("default_generation_settings")
    context = settings.get("n_ctx") if isinstance(settings, dict) else None
    return ServerInfo(data["total_slots"], context if _count(context) else None, "llama.cpp /props")


def parse_slots(data: Any) -> ServerInfo | None:
    """llama.cpp's /slots: one entry per slot."""
    if not isinstance(data, list) or not data or not all(isinstance(s, dict) and "id" in s for s in data):
        return None
    context = data[0].get("n_ctx")
    return ServerInfo(len(data), context if _count(context) else None, "llama.cpp /slots")


def parse_models(data: Any) -> ServerInfo | None:
    """vLLM's /v1/models: `max_model_len` of the first model (the context; no slots)."""
    models = data.get("data") if isinstance(data, dict) else None
    first = models[0] if isinstance(models, list) and models and isinstance(models[0], dict) else {}
    context = first.get("max_model_len")
    return ServerInfo(None, context, "vLLM /v1/models") if _count(context) else None


async def server_info(http: httpx.AsyncClient, base_url: str, auth: httpx.Auth | None = None) -> ServerInfo:
    """What the server at `base_url` (an OpenAI-compatible `.../v1`) publishes; ServerInfo() if nothing.
    `auth`: the endpoint's key (a llama.cpp started with --api-key wants it on /slots)."""
    api = base_url.rstrip("/")
    root = api.removesuffix("/v1")
    for url, parse in ((root + "/props", parse_props), (root + "/slots", parse_slots),
                       (api + "/models", parse_models)):
        found = parse(await _get_json(http, url, auth))
        if found is not None:
            return found
    return ServerInfo()


async def _get_json(http: httpx.AsyncClient, url: str, auth: httpx.Auth | None) -> Any:
    try:
        response = await http.get(url, auth=auth or httpx.USE_CLIENT_DEFAULT, timeout=_TIMEOUT_S)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0

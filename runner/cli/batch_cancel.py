"""`runs rm` of a run with batches still outstanding at a provider ('submitting' or 'submitted'): each is
cancelled through its endpoint's batch API when the endpoint's key is in the environment; otherwise, or
when the cancel fails, its id, provider and endpoint are printed with the request that cancels it. A
submitted batch is never forgotten silently: the provider may still process and bill it.

A batch journaled as 'submitting' has no id yet (its create may or may not have reached the provider):
OpenAI's batches carry the run's label, so it is looked up; Anthropic's carry none, so the user is told
where to look. The key is read from the variable the run's endpoint names (or the provider's default),
used only in the request's header, and never printed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import orjson

from runner.common.liveness import process_alive
from runner.journal import read_only
from runner.journal.batch_journal import ProviderBatchRow
from runner.models.endpoints import endpoint_of
from runner.providers import make_http_client
from runner.providers.anthropic import ANTHROPIC_VERSION, AnthropicClient
from runner.providers.batch_anthropic import AnthropicBatches
from runner.providers.batch_api import BatchBackend
from runner.providers.batch_openai import OpenAIBatches
from runner.providers.openai_compat import OpenAICompatClient
from runner.providers.retry import Retrier, RetryPolicy
from runner.providers.taxonomy import InfrastructureError
from simulators.errors import ShiftbenchInputError

__all__ = ["cancel_outstanding", "how_to_cancel"]

_RETRIES = RetryPolicy(max_attempts=3, attempt_timeout_s=60.0, deadline_s=180.0)
"""A cancel is one small request: a few tries, then the user is told how to cancel it by hand."""


async def cancel_outstanding(journal: Path, run_id: str, say: Callable[[str], None],
                             environ: Mapping[str, str] = os.environ) -> int:
    """Cancel (or name) each outstanding batch of `run_id`; returns how many there were. A run that is
    being written, or is not in the journal, is left to `remove_run`, which refuses it."""
    async with read_only(journal) as reader:
        run = await reader.run(run_id)
        if run is None or (run.status == "running" and process_alive(run.pid)):
            return 0
        outstanding = await reader.outstanding_batches(run_id)
    if not outstanding:
        return 0
    endpoints = _endpoints(run.config)
    say(f"Run {run_id} has {len(outstanding)} batch{'es' if len(outstanding) > 1 else ''} outstanding at a "
        "provider, which may still process and bill it:")
    async with make_http_client() as http:
        for batch in outstanding:
            say("  " + await _cancel(batch, endpoints, environ, http))
    return len(outstanding)


async def _cancel(batch: ProviderBatchRow, endpoints: Mapping[str, Any], environ: Mapping[str, str],
                  http: httpx.AsyncClient) -> str:
    key_env = _key_env(batch, endpoints)
    key = environ.get(key_env, "")
    what = f"{batch.api} batch {batch.batch_id or batch.label} ({batch.items} requests, {batch.status})"
    if not key:
        return f"NOT cancelled ({key_env} is not set): {what}; {how_to_cancel(batch, key_env)}"
    backend = _backend(batch, key, http)
    try:
        batch_id = batch.batch_id or await backend.find(batch.label)
        if batch_id is None:
            return _never_found(batch, what, key_env)
        await backend.cancel(batch_id)
    except InfrastructureError as failed:
        return f"NOT cancelled ({failed.failure.value}): {what}; {how_to_cancel(batch, key_env)}"
    return f"cancelled {batch.api} batch {batch_id} ({batch.items} requests) on {batch.endpoint}"


def how_to_cancel(batch: ProviderBatchRow, key_env: str) -> str:
    """The request that cancels the batch by hand (the key by its variable's name, never its value)."""
    if not batch.batch_id:
        return _look_for(batch, key_env)
    base = batch.endpoint.rstrip("/")
    if batch.api == "anthropic":
        return (f"cancel it with `curl -X POST {base}/v1/messages/batches/{batch.batch_id}/cancel "
                f"-H \"x-api-key: ${key_env}\" -H \"anthropic-version: {ANTHROPIC_VERSION}\"`")
    return (f"cancel it with `curl -X POST {base}/batches/{batch.batch_id}/cancel "
            f"-H \"Authorization: Bearer ${key_env}\"`")


def _never_found(batch: ProviderBatchRow, what: str, key_env: str) -> str:
    if batch.api == "openai":
        return f"nothing to cancel: {what} was never created (no batch on {batch.endpoint} carries its label)"
    return f"NOT cancelled: {what} may have been created; {_look_for(batch, key_env)}"


def _look_for(batch: ProviderBatchRow, key_env: str) -> str:
    base = batch.endpoint.rstrip("/")
    listing = f"{base}/v1/messages/batches" if batch.api == "anthropic" else f"{base}/batches"
    return (f"its create may have reached {batch.endpoint}: list the batches there (GET {listing}, key "
            f"${key_env}) and cancel any created at {batch.submitted_at:.0f} (Unix time) with {batch.items} requests")


def _backend(batch: ProviderBatchRow, key: str, http: httpx.AsyncClient) -> BatchBackend:
    retrier = Retrier(_RETRIES)
    if batch.api == "anthropic":
        return AnthropicBatches(AnthropicClient(batch.model, api_key=key, http=http, base_url=batch.endpoint,
                                                retrier=retrier))
    return OpenAIBatches(OpenAICompatClient(batch.model, base_url=batch.endpoint, api_key=key, http=http,
                                            retrier=retrier))


def _key_env(batch: ProviderBatchRow, endpoints: Mapping[str, Any]) -> str:
    """The variable the run's endpoint for the batch's model reads its key from (the provider's default
    for a model name the run's config no longer resolves)."""
    for name in (batch.model, f"{batch.api}:model"):
        try:
            return endpoint_of(name, endpoints).key_env
        except ShiftbenchInputError:
            continue
    return f"{batch.api.upper()}_API_KEY"


def _endpoints(config_json: str) -> Mapping[str, Any]:
    try:
        config = orjson.loads(config_json)
    except orjson.JSONDecodeError:
        return {}
    endpoints = config.get("endpoints") if isinstance(config, dict) else None
    return endpoints if isinstance(endpoints, dict) else {}

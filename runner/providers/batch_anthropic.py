"""Anthropic's Message Batches (`/v1/messages/batches`).

    submit    POST /v1/messages/batches {requests: [{custom_id, params}]}; `params` is what the live
              client's `body()` builds (its cache marks included: the batch discount stacks with prompt
              caching), without `stream`
    find      always None: a message batch carries no metadata, so a batch whose id was never recorded
              cannot be recognised (the caller submits again, and says so). For the same reason a create
              whose answer was lost on the wire is not looked for before it is retried.
    status    GET /v1/messages/batches/{id}: ended once `processing_status` is `ended`; the counts are
              its `request_counts` (processing, succeeded, errored, canceled, expired)
    results   the JSONL at the batch's `results_url` (followed only on the endpoint's own host, as the key
              goes with it): succeeded (the whole Message), errored (its error's type and message),
              canceled, expired
    cancel    POST /v1/messages/batches/{id}/cancel, unless the batch has ended already

A succeeded item's Message is read by `parse_message`, into the same assembly the live stream fills, and
its usage by `anthropic_usage`, so turn, cache reads, cache writes and output tokens read as live ones.

Cache TTL: the bodies' marks ask for the endpoint's `cache_ttl` when it fixes one, else 1 hour: a batch
takes minutes to hours and the next turn's batch comes after it, so a 5-minute entry would mostly expire
unread (the live path's own rule, 1 hour once a stream's requests come more than 4 minutes apart, says
the same). Every result records the TTL its body asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import orjson

from runner.providers.anthropic import AnthropicClient, parse_message
from runner.providers.batch_api import BatchItem, BatchResult, BatchStatus
from runner.providers.batch_http import BatchHttp
from runner.providers.endpoint import model_response
from runner.providers.prompt_cache import ONE_HOUR, CacheTtl
from runner.providers.retry import Outcome
from runner.providers.taxonomy import Failure, InfrastructureError
from simulators.model_api import ModelRequest
from simulators.protocol import JSON

__all__ = ["BATCHES_PATH", "MAX_BYTES", "MAX_ITEMS", "AnthropicBatches"]

BATCHES_PATH = "/v1/messages/batches"
MAX_ITEMS = 100_000
"""Requests per message batch at most (Anthropic's limit)."""
MAX_BYTES = 256 * 1024 * 1024
"""A message batch's size at most (Anthropic's limit)."""
_COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


class AnthropicBatches:
    def __init__(self, client: AnthropicClient, cache_ttl: CacheTtl | None = None) -> None:
        """`cache_ttl`: the marks' TTL; None: the endpoint's fixed `cache_ttl`, else 1 hour."""
        self._client = client
        self._http = BatchHttp(client.batch_target())
        self._ttl: CacheTtl = cache_ttl or client.fixed_cache_ttl or ONE_HOUR

    @property
    def name(self) -> str:
        return self._client.name

    def body(self, request: ModelRequest) -> dict[str, JSON]:
        body = self._client.body(request, self._ttl)
        body.pop("stream", None)
        return body

    async def submit(self, items: Sequence[BatchItem], label: str) -> str:
        """`label` is not sent: message batches have no metadata to carry it."""
        body = {"requests": [{"custom_id": item.custom_id, "params": dict(item.body)} for item in items]}
        size = len(orjson.dumps(body))
        if len(items) > MAX_ITEMS or size > MAX_BYTES:
            raise ValueError(f"a message batch holds at most {MAX_ITEMS:,} requests in {MAX_BYTES:,} bytes "
                             f"(this one: {len(items):,} in {size:,}); submit it in parts")
        created = await self._http.json("POST", BATCHES_PATH, body=body)
        return str(created["id"])

    async def find(self, label: str) -> str | None:
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        return _status(await self._http.json("GET", f"{BATCHES_PATH}/{batch_id}"))

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        batch = await self._http.json("GET", f"{BATCHES_PATH}/{batch_id}")
        if not _status(batch).ended:
            raise ValueError(f"message batch {batch_id} has not ended (it is {batch.get('processing_status')})")
        url = batch.get("results_url")
        lines = await self._http.lines(url if isinstance(url, str) and url else f"{BATCHES_PATH}/{batch_id}/results")
        seen: set[str] = set()
        for line in lines:
            custom_id = str(line.get("custom_id"))
            if custom_id not in seen:
                seen.add(custom_id)
                yield self._result(custom_id, line.get("result") or {})

    async def cancel(self, batch_id: str) -> None:
        if (await self.status(batch_id)).ended:
            return
        try:
            await self._http.json("POST", f"{BATCHES_PATH}/{batch_id}/cancel")
        except InfrastructureError as failed:
            if failed.failure is not Failure.REJECTED or not (await self.status(batch_id)).ended:
                raise  # a refusal because it ended meanwhile is no error; anything else is

    def _result(self, custom_id: str, result: Mapping[str, Any]) -> BatchResult:
        kind = result.get("type")
        if kind == "succeeded" and isinstance(result.get("message"), dict):
            turn, usage, served_model = parse_message(result["message"])
            response = model_response(Outcome(turn, usage, 1, served_model=served_model))
            return BatchResult(custom_id, "succeeded", response=dataclasses.replace(response, cache_ttl=self._ttl))
        if kind in ("canceled", "expired"):
            return BatchResult(custom_id, kind)
        return BatchResult(custom_id, "errored", error=self._http.target.secret.redact(_error_text(result)))


def _status(batch: Mapping[str, Any]) -> BatchStatus:
    counts = batch.get("request_counts") or {}
    word = str(batch.get("processing_status") or "")
    return BatchStatus(str(batch.get("id") or ""), word == "ended", word,
                       {key: int(counts.get(key) or 0) for key in _COUNTS})


def _error_text(result: Mapping[str, Any]) -> str:
    """`{type: error, error: {type, message}}` as "type: message"; anything else said plainly."""
    outer = result.get("error")
    inner = outer.get("error", outer) if isinstance(outer, dict) else None
    if not isinstance(inner, dict):
        return f"result {result.get('type')!r} without an error"
    return f"{inner.get('type') or 'error'}: {inner.get('message') or ''}".strip()

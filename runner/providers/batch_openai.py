"""OpenAI's Batch API, for OpenAI and any OpenAI-compatible server that offers `/v1/files` + `/v1/batches`
(some proxies do; llama.cpp and vLLM do not: `runner.providers.batch_probe` tells).

    submit    the items as a JSONL input file ({custom_id, method: POST, url: /v1/chat/completions, body}),
              uploaded to POST /files (purpose `batch`), then POST /batches with `completion_window` and
              `metadata.shiftbench_label`; a retried create first looks the label up, so a create whose
              answer was lost is never made twice
    find      GET /batches (newest first, `limit` / `after` pages) for that label
    status    GET /batches/{id}: ended once completed, expired, cancelled or failed
    results   the input file (which custom ids were asked), the output file (one line per 2xx reply) and
              the error file (non-2xx replies; `batch_expired` / `batch_cancelled` lines); an id in
              neither file after an expired or cancelled batch is expired or canceled likewise, and every
              item of a batch that failed as a whole is errored with the batch's reason
    cancel    POST /batches/{id}/cancel, unless the batch has ended already

Each item body is what the live client's `body()` builds, its streaming fields removed; each reply is
read by `parse_completion`, the live path's own reader of a non-streamed reply, and a reply without usage
is estimated as the live path estimates it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx
import orjson

from runner.providers.batch_api import BatchItem, BatchResult, BatchStatus, ItemOutcome
from runner.providers.batch_http import BatchHttp
from runner.providers.endpoint import estimated_usage, model_response
from runner.providers.failures import AttemptFailed
from runner.providers.openai_compat import OpenAICompatClient, parse_completion
from runner.providers.retry import Outcome
from runner.providers.taxonomy import Failure, InfrastructureError
from simulators.model_api import ModelRequest, Usage
from simulators.protocol import JSON

__all__ = ["CHAT_ENDPOINT", "LABEL_KEY", "MAX_INPUT_BYTES", "MAX_ITEMS", "OpenAIBatches"]

CHAT_ENDPOINT = "/v1/chat/completions"
MAX_ITEMS = 50_000
"""Requests per batch at most (OpenAI's limit)."""
MAX_INPUT_BYTES = 200 * 1024 * 1024
"""The input file's size at most (OpenAI's limit for batch input files)."""
LABEL_KEY = "shiftbench_label"
_ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
_STREAM_FIELDS = ("stream", "stream_options")
_UNANSWERED: dict[str, ItemOutcome] = {"expired": "expired", "cancelled": "canceled"}
"""What an item in neither file is, by the batch's end."""
_FILE_PURPOSES = {"api.together.xyz": "batch-api"}
"""Hosts whose documented upload purpose for a batch input file is not OpenAI's `batch`."""
_PAGE = 100
"""Batches per page of the list (OpenAI's most)."""
_LIST_PAGES = 20
"""`find` reads at most this many pages (the newest 2,000 batches)."""


class OpenAIBatches:
    def __init__(self, client: OpenAICompatClient, completion_window: str = "24h", file_purpose: str = "") -> None:
        """`file_purpose`: the input file's upload purpose; empty: `batch` (OpenAI's word), or the word a
        known OpenAI-compatible host documents instead (Together: `batch-api`)."""
        self._client = client
        self._http = BatchHttp(client.batch_target())
        self._window = completion_window
        host = httpx.URL(client.base_url).host
        self._purpose = file_purpose or _FILE_PURPOSES.get(host, "batch")

    @property
    def name(self) -> str:
        return self._client.name

    def body(self, request: ModelRequest) -> dict[str, JSON]:
        body = self._client.body(request)
        for key in _STREAM_FIELDS:
            body.pop(key, None)
        return body

    async def submit(self, items: Sequence[BatchItem], label: str) -> str:
        lines = b"".join(orjson.dumps({"custom_id": item.custom_id, "method": "POST", "url": CHAT_ENDPOINT,
                                       "body": item.body}) + b"\n" for item in items)
        if len(items) > MAX_ITEMS or len(lines) > MAX_INPUT_BYTES:
            raise ValueError(f"a batch holds at most {MAX_ITEMS:,} requests in {MAX_INPUT_BYTES:,} bytes "
                             f"(this one: {len(items):,} in {len(lines):,}); submit it in parts")
        uploaded = await self._http.json("POST", "/files", data={"purpose": self._purpose},
                                         files={"file": (f"shiftbench-{label}.jsonl", lines, "application/jsonl")})
        create = {"input_file_id": uploaded["id"], "endpoint": CHAT_ENDPOINT, "completion_window": self._window,
                  "metadata": {LABEL_KEY: label}}

        async def made_already() -> dict[str, Any] | None:
            found = await self.find(label)
            return {"id": found} if found is not None else None

        created = await self._http.json("POST", "/batches", body=create, recheck=made_already)
        return str(created["id"])

    async def find(self, label: str) -> str | None:
        after: str | None = None
        for _ in range(_LIST_PAGES):
            params: dict[str, str | int] = {"limit": _PAGE} | ({"after": after} if after else {})
            page = await self._http.json("GET", "/batches", params=params)
            for batch in page.get("data") or ():
                if isinstance(batch, dict) and (batch.get("metadata") or {}).get(LABEL_KEY) == label:
                    return str(batch["id"])
            after = page.get("last_id")
            if not page.get("has_more") or not after:
                return None
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        return _status(await self._http.json("GET", f"/batches/{batch_id}"))

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        batch = await self._http.json("GET", f"/batches/{batch_id}")
        status = _status(batch)
        if not status.ended:
            raise ValueError(f"batch {batch_id} has not ended (it is {status.provider_status})")
        asked = _InputFile(self, batch.get("input_file_id"))
        if status.provider_status == "failed":
            for custom_id in await asked.bodies():
                yield BatchResult(custom_id, "errored", error=f"the batch failed: {status.failed_reason}")
            return
        seen: set[str] = set()
        lines = await self._file_lines(batch.get("output_file_id")) + await self._file_lines(batch.get("error_file_id"))
        for line in lines:
            custom_id = str(line.get("custom_id"))
            if custom_id not in seen:
                seen.add(custom_id)
                found = self._result(custom_id, line, None)
                if found is None:  # no usage in the reply: estimated from its body, as the live path does
                    found = self._result(custom_id, line, (await asked.bodies()).get(custom_id) or {})
                assert found is not None
                yield found
        if status.provider_status == "completed" and len(seen) >= status.counts["total"]:
            return  # every item accounted for: the input file (the largest of the three) is not needed
        missing = _UNANSWERED.get(status.provider_status)
        for custom_id in await asked.bodies():
            if custom_id not in seen:
                yield (BatchResult(custom_id, missing) if missing is not None
                       else BatchResult(custom_id, "errored", error="missing from the batch's output and error files"))

    async def cancel(self, batch_id: str) -> None:
        if (await self.status(batch_id)).ended:
            return
        try:
            await self._http.json("POST", f"/batches/{batch_id}/cancel")
        except InfrastructureError as failed:
            if failed.failure is not Failure.REJECTED or not (await self.status(batch_id)).ended:
                raise  # a refusal because it ended meanwhile is no error; anything else is

    async def _file_lines(self, file_id: object) -> list[dict[str, Any]]:
        return await self._http.lines(f"/files/{file_id}/content") if isinstance(file_id, str) and file_id else []

    def _result(self, custom_id: str, line: Mapping[str, Any], body: Mapping[str, Any] | None) -> BatchResult | None:
        """The line's result; None when its reply carried no usage and `body` (to estimate it from, as the
        live path does) was not given."""
        error = line.get("error")
        response = line.get("response")
        if isinstance(error, dict) and error.get("code") in ("batch_expired", "batch_cancelled"):
            return BatchResult(custom_id, "expired" if error["code"] == "batch_expired" else "canceled")
        if not isinstance(response, dict):
            text = error.get("message") if isinstance(error, dict) else None
            return BatchResult(custom_id, "errored", error=self._redact(str(text or "no response")))
        code = response.get("status_code")
        found = response.get("body")
        reply: Mapping[str, Any] = found if isinstance(found, dict) else {}
        if not isinstance(code, int) or not 200 <= code < 300:
            inner = reply.get("error")
            detail: Mapping[str, Any] = inner if isinstance(inner, dict) else {}
            return BatchResult(custom_id, "errored",
                               error=self._redact(f"HTTP {code}: {detail.get('message') or 'error'}"))
        try:
            turn, usage, served_model = parse_completion(reply, self._http.target.secret)
        except AttemptFailed as failed:
            return BatchResult(custom_id, "errored", error=failed.message)
        if usage is None or usage == Usage():  # as the live path does for a reply that carried none
            if body is None:
                return None
            usage = estimated_usage(orjson.dumps(body), turn, _max_tokens(body))
        return BatchResult(custom_id, "succeeded",
                           response=model_response(Outcome(turn, usage, 1, served_model=served_model)))

    def _redact(self, text: str) -> str:
        return self._http.target.secret.redact(text)


class _InputFile:
    """A batch's input file, downloaded on first need: custom id -> request body, in submission order."""

    def __init__(self, batches: OpenAIBatches, file_id: object) -> None:
        self._batches = batches
        self._file_id = file_id
        self._bodies: dict[str, Mapping[str, Any]] | None = None

    async def bodies(self) -> dict[str, Mapping[str, Any]]:
        if self._bodies is None:
            lines = await self._batches._file_lines(self._file_id)
            self._bodies = {str(line.get("custom_id")): line.get("body") or {} for line in lines}
        return self._bodies


def _status(batch: Mapping[str, Any]) -> BatchStatus:
    word = str(batch.get("status") or "")
    counts = batch.get("request_counts") or {}
    total, done, failed = (int(counts.get(k) or 0) for k in ("total", "completed", "failed"))
    errors = (batch.get("errors") or {}).get("data") or []
    reason = "; ".join(str(e.get("message") or e.get("code")) for e in errors if isinstance(e, dict))
    return BatchStatus(str(batch.get("id") or ""), word in _ENDED, word,
                       {"total": total, "succeeded": done, "errored": failed,
                        "processing": max(0, total - done - failed)},
                       failed_reason=reason or ("failed" if word == "failed" else ""))


def _max_tokens(body: Mapping[str, Any]) -> int:
    value = body.get("max_tokens") or body.get("max_completion_tokens")
    return value if isinstance(value, int) else 1

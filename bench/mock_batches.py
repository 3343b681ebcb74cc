"""The mock provider's batch APIs, as the providers document them:

    OpenAI      POST /v1/files (multipart, purpose=batch)   GET /v1/files/{id}   GET /v1/files/{id}/content
                POST /v1/batches {input_file_id, endpoint, completion_window, metadata}
                GET /v1/batches/{id}   GET /v1/batches?limit=&after=   POST /v1/batches/{id}/cancel
                status validating -> in_progress -> finalizing -> completed | expired | cancelling ->
                cancelled | failed; output_file_id / error_file_id once ended
    Anthropic   POST /v1/messages/batches {requests: [{custom_id, params}]}
                GET /v1/messages/batches/{id}   GET /v1/messages/batches?limit=&after_id=
                GET /v1/messages/batches/{id}/results (JSONL)   POST /v1/messages/batches/{id}/cancel
                processing_status in_progress -> canceling -> ended
    the mock    GET /_mock/batch_submissions: {custom_id: times submitted} (also `submissions` in process)

Each item is answered by the live endpoint's own `answer` (responder and prefix cache) for its body, so a
batched request gets the reply a live one would. Settings (`mock.batches.settings`, taken by each batch
at its creation): latency, errored items, expiry with part done, whole-batch failure
(bench/mock_batch_state.py). `offered = False`: every batch route answers 404, as llama.cpp and vLLM do.
`key`: when set, a request without it is refused with 401. `fail_next(method, path, *failures)`: the
next requests to that route answer these failures (e.g. a 429 on batch create) before working again;
`lose_next_answer(method, path)`: the next one is carried out but its connection drops unanswered.

The mock's checks, stricter where the providers are vague: a batch whose lines are not POSTs to its
endpoint, repeat a custom id, mix models or ask for streaming fails validation (OpenAI) or is refused
with 400 (Anthropic); custom ids must be 1-64 characters of [A-Za-z0-9_-].
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

import orjson

from bench import mock_batch_objects as objects
from bench import mock_wire as wire
from bench.mock_batch_state import Batch, BatchSettings
from bench.mock_types import JSON, Dialect, Failure, Recorded, Response

__all__ = ["BatchSettings", "MockBatches"]

_ROUTES = ("/v1/files", "/v1/batches", "/v1/messages/batches", "/_mock/")
_CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ENDPOINTS = ("/v1/chat/completions",)


class _Host(Protocol):
    base_url: str

    def answer(self, request: Recorded) -> Response: ...


class MockBatches:
    def __init__(self, host: _Host) -> None:
        self.host = host
        self.settings = BatchSettings()
        self.offered = True
        self.key: str | None = None
        self.clock: Callable[[], float] = time.time
        self.batches: dict[str, Batch] = {}
        """Every batch created, by id, in creation order."""
        self.files: dict[str, objects.MockFile] = {}
        self.submissions: Counter[str] = Counter()
        """Custom id -> times it was submitted in a batch the mock accepted."""
        self.keep = True
        """False: a batch forgets what it no longer needs (its input file once read, its request bodies
        once ended, its output file once downloaded), so a long bench holds only the batches in flight."""
        self.calls: list[tuple[str, str]] = []
        """(method, path) of every batch-API request, answered or refused."""
        self._faults: dict[tuple[str, str], deque[Failure]] = {}
        self._lost: set[tuple[str, str]] = set()
        self._ids = itertools.count(1)

    def fail_next(self, method: str, path: str, *failures: Failure) -> None:
        self._faults.setdefault((method, path), deque()).extend(failures)

    def lose_next_answer(self, method: str, path: str) -> None:
        """The next request to that route is carried out, then its connection drops before the answer:
        the client cannot know whether it was (a create whose answer is lost must not be made twice)."""
        self._lost.add((method, path))

    def handles(self, path: str) -> bool:
        return urlsplit(path).path.startswith(_ROUTES)

    def serve(self, method: str, target: str, headers: Mapping[str, str], raw: bytes) -> bytes | None:
        """The whole HTTP response to one batch-API request; None: drop the connection unanswered."""
        split = urlsplit(target)
        path, query = split.path.rstrip("/"), {k: v[-1] for k, v in parse_qs(split.query).items()}
        dialect: Dialect = "anthropic" if path.startswith("/v1/messages") else "openai"
        self.calls.append((method, path))
        if path == "/_mock/batch_submissions":
            return wire.http(200, dict(self.submissions), {})
        fault = self._faults.get((method, path))
        if fault:
            return _failure(dialect, fault.popleft())
        if not self.offered:
            return _failure(dialect, Failure(404, f"no route {method} {path}"))
        if self.key is not None and self.key not in (headers.get("x-api-key"), _bearer(headers)):
            return _failure(dialect, Failure(401, "invalid x-api-key" if dialect == "anthropic"
                                             else "Incorrect API key provided"))
        try:
            answer = self._route(method, path, query, headers, raw)
        except _Refused as refused:
            return _failure(dialect, refused.failure)
        if (method, path) in self._lost:
            self._lost.discard((method, path))
            return None
        return answer

    def _route(self, method: str, path: str, query: Mapping[str, str], headers: Mapping[str, str],
               raw: bytes) -> bytes:
        parts = path.strip("/").split("/")
        if parts[:3] == ["v1", "messages", "batches"]:
            return self._anthropic(method, parts[3:], query, raw)
        if parts[:2] == ["v1", "files"]:
            return self._files(method, parts[2:], headers, raw)
        if parts[:2] == ["v1", "batches"]:
            return self._openai(method, parts[2:], query, raw)
        raise _Refused(Failure(404, f"no route {method} {path}"))

    # OpenAI ------------------------------------------------------------------------------------------

    def _files(self, method: str, rest: list[str], headers: Mapping[str, str], raw: bytes) -> bytes:
        if method == "POST" and not rest:
            fields = _multipart(headers.get("content-type", ""), raw)
            if fields.get("purpose", (b"", ""))[0] != b"batch":
                raise _Refused(Failure(400, "purpose must be 'batch'"))
            content, filename = fields.get("file", (b"", ""))
            if not filename:
                raise _Refused(Failure(400, "a multipart field 'file' is required"))
            return _ok(objects.openai_file(self._file(filename, "batch", content)))
        file = self.files.get(rest[0]) if rest else None
        if method != "GET" or file is None or len(rest) > 2 or rest[1:] not in ([], ["content"]):
            raise _Refused(Failure(404, f"No such File object: {rest[0] if rest else ''}"))
        if rest[1:] == ["content"]:
            content = file.content
            if not self.keep and file.purpose == "batch_output":
                self.files[file.id] = dataclasses.replace(file, content=b"")
            return wire.head(200, {"content-type": "application/octet-stream",
                                   "content-length": str(len(content))}) + content
        return _ok(objects.openai_file(file))

    def _openai(self, method: str, rest: list[str], query: Mapping[str, str], raw: bytes) -> bytes:
        if not rest and method == "POST":
            return _ok(objects.openai_batch(self._create_openai(_json(raw))))
        if not rest and method == "GET":
            return _ok(self._list("openai", query, "after", objects.openai_batch) | {"object": "list"})
        batch = self._batch(rest[0], "openai")
        if rest[1:] == ["cancel"] and method == "POST":
            self._cancel(batch)
            if batch.cancel_at is None:  # it had ended: OpenAI refuses to cancel it
                raise _Refused(Failure(400, f"Cannot cancel a batch with status '{batch.phase}'."))
            return _ok(objects.openai_batch(batch))
        if rest[1:] or method != "GET":
            raise _Refused(Failure(404, f"no route {method} /v1/batches/{'/'.join(rest)}"))
        self._view(batch)
        return _ok(objects.openai_batch(batch))

    def _create_openai(self, body: JSON) -> Batch:
        file = self.files.get(str(body.get("input_file_id")))
        if file is None or file.purpose != "batch":
            raise _Refused(Failure(400, f"Invalid input_file_id: {body.get('input_file_id')!r}"))
        if body.get("endpoint") not in _ENDPOINTS:
            raise _Refused(Failure(400, f"endpoint must be one of {', '.join(_ENDPOINTS)}"))
        if body.get("completion_window") != "24h":
            raise _Refused(Failure(400, "completion_window must be '24h'"))
        metadata = body.get("metadata")
        if metadata is not None and not _valid_metadata(metadata):
            raise _Refused(Failure(400, "metadata: at most 16 keys of 64 characters, values of 512"))
        items, errors = _openai_lines(file.content, str(body["endpoint"]))
        if not self.keep:
            self.files[file.id] = dataclasses.replace(file, content=b"")
        batch = Batch(f"batch_{next(self._ids):06d}", "openai", self.clock(), items, self.settings,
                      endpoint=str(body["endpoint"]), input_file_id=file.id, metadata=metadata, errors=errors)
        return self._accept(batch)

    def _finish_openai(self, batch: Batch) -> None:
        if batch.ended_at is None or batch.output_file_id or batch.error_file_id or batch.errors:
            return
        output, errors = objects.openai_result_lines(batch)
        if output:
            batch.output_file_id = self._file(f"{batch.id}_output.jsonl", "batch_output", objects.jsonl(output)).id
        if errors:
            batch.error_file_id = self._file(f"{batch.id}_error.jsonl", "batch_output", objects.jsonl(errors)).id

    # Anthropic ---------------------------------------------------------------------------------------

    def _anthropic(self, method: str, rest: list[str], query: Mapping[str, str], raw: bytes) -> bytes:
        def shown(batch: Batch) -> JSON:
            return objects.anthropic_batch(batch, self.host.base_url)

        if not rest and method == "POST":
            return _ok(shown(self._create_anthropic(_json(raw))))
        if not rest and method == "GET":
            return _ok(self._list("anthropic", query, "after_id", shown))
        batch = self._batch(rest[0], "anthropic")
        if rest[1:] == ["cancel"] and method == "POST":
            self._cancel(batch)
            return _ok(shown(batch))
        if method == "GET" and rest[1:] in ([], ["results"]):
            self._view(batch)
            if rest[1:] == ["results"]:
                if batch.ended_at is None:
                    raise _Refused(Failure(400, f"Message Batch {batch.id} has not yet ended"))
                content = objects.jsonl(objects.anthropic_results(batch))
                return wire.head(200, {"content-type": "application/binary",
                                       "content-length": str(len(content))}) + content
            return _ok(shown(batch))
        raise _Refused(Failure(404, f"no route {method} /v1/messages/batches/{'/'.join(rest)}"))

    def _create_anthropic(self, body: JSON) -> Batch:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            raise _Refused(Failure(400, "requests: a non-empty list is required"))
        items: list[tuple[str, JSON]] = []
        seen: set[str] = set()
        for number, entry in enumerate(requests):
            custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
            params = entry.get("params") if isinstance(entry, dict) else None
            problem = _item_problem(custom_id, params, seen, ("model", "max_tokens", "messages"))
            if problem:
                raise _Refused(Failure(400, f"requests.{number}: {problem}"))
            seen.add(str(custom_id))
            items.append((str(custom_id), params))
        batch = Batch(f"msgbatch_{next(self._ids):06d}", "anthropic", self.clock(), items, self.settings)
        return self._accept(batch)

    # Shared ------------------------------------------------------------------------------------------

    def _accept(self, batch: Batch) -> Batch:
        self.batches[batch.id] = batch
        self.submissions.update(custom_id for custom_id, _ in batch.items)
        return batch

    def _batch(self, batch_id: str, dialect: Dialect) -> Batch:
        batch = self.batches.get(batch_id)
        if batch is None or batch.dialect != dialect:
            raise _Refused(Failure(404, f"No batch found with id '{batch_id}'"))
        return batch

    def _view(self, batch: Batch) -> None:
        batch.advance(self.clock(), self.host.answer, self._ids)
        batch.shown = True
        if not self.keep and batch.ended_at is not None:
            batch.items = [(custom_id, None) for custom_id, _ in batch.items]
        if batch.dialect == "openai":
            self._finish_openai(batch)

    def _cancel(self, batch: Batch) -> None:
        self._view(batch)
        if batch.ended_at is None and batch.cancel_at is None:
            batch.cancel_at = self.clock()
            batch.advance(batch.cancel_at, self.host.answer, self._ids)

    def _list(self, dialect: Dialect, query: Mapping[str, str], cursor: str,
              show: Callable[[Batch], JSON]) -> dict[str, JSON]:
        newest_first = [b for b in reversed(self.batches.values()) if b.dialect == dialect]
        for batch in newest_first:
            self._view(batch)
        ids = [b.id for b in newest_first]
        after = query.get(cursor)
        start = ids.index(after) + 1 if after in ids else 0
        limit = max(1, min(100, int(query.get("limit", "20"))))
        page = newest_first[start:start + limit]
        return {"data": [show(b) for b in page], "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None, "has_more": start + limit < len(ids)}

    def _file(self, filename: str, purpose: str, content: bytes) -> objects.MockFile:
        file = objects.MockFile(f"file-{next(self._ids):06d}", filename, purpose, content, self.clock())
        self.files[file.id] = file
        return file


class _Refused(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _openai_lines(content: bytes, endpoint: str) -> tuple[list[tuple[str, JSON]], list[JSON]]:
    """The input file's requests, and the validation errors (OpenAI's `errors.data`) found in it."""
    items: list[tuple[str, JSON]] = []
    errors: list[JSON] = []
    models: set[str] = set()
    seen: set[str] = set()
    for number, text in enumerate(content.splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = orjson.loads(text)
        except orjson.JSONDecodeError:
            line = None
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        body = line.get("body") if isinstance(line, dict) else None
        problem = _item_problem(custom_id, body, seen, ("model", "messages"))
        if not problem and isinstance(line, dict) and (line.get("method") != "POST" or line.get("url") != endpoint):
            problem = f"each line must be a POST to {endpoint}"
        if problem:
            errors.append({"code": "invalid_request", "message": problem, "param": None, "line": number})
            continue
        assert isinstance(body, dict)
        models.add(str(body.get("model")))
        seen.add(str(custom_id))
        items.append((str(custom_id), body))
    if len(models) > 1:
        errors.append({"code": "mismatched_model", "message": "every line must name the same model",
                       "param": "body.model", "line": None})
    if not items and not errors:
        errors.append({"code": "empty_file", "message": "the input file has no requests", "param": None,
                       "line": None})
    return items, errors


def _item_problem(custom_id: object, body: object, seen: set[str], required: tuple[str, ...]) -> str:
    if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
        return "custom_id must be 1-64 characters of [A-Za-z0-9_-]"
    if custom_id in seen:
        return f"custom_id {custom_id!r} is used more than once"
    if not isinstance(body, dict) or any(key not in body for key in required):
        return f"the request must be an object with {', '.join(required)}"
    if body.get("stream"):
        return "streaming is not supported in a batch"
    return ""


def _valid_metadata(metadata: object) -> bool:
    return (isinstance(metadata, dict) and len(metadata) <= 16
            and all(isinstance(k, str) and len(k) <= 64 and isinstance(v, str) and len(v) <= 512
                    for k, v in metadata.items()))


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[bytes, str]]:
    """A multipart/form-data body's fields: name -> (value, filename or "")."""
    boundary = content_type.partition("boundary=")[2].strip('"')
    fields: dict[str, tuple[bytes, str]] = {}
    if not boundary:
        return fields
    for part in raw.split(b"--" + boundary.encode())[1:]:
        head, _, value = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
        disposition = head.decode("latin-1")
        name = re.search(r'name="([^"]*)"', disposition)
        filename = re.search(r'filename="([^"]*)"', disposition)
        if name:
            fields[name.group(1)] = (value.removesuffix(b"\r\n"), filename.group(1) if filename else "")
    return fields


def _bearer(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return value.removeprefix("Bearer ") if value.startswith("Bearer ") else None


def _json(raw: bytes) -> JSON:
    try:
        return orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError as exc:
        raise _Refused(Failure(400, "body is not JSON")) from exc


def _ok(body: JSON) -> bytes:
    return wire.http(200, body, {})


def _failure(dialect: Dialect, failure: Failure) -> bytes:
    path = "/v1/messages" if dialect == "anthropic" else "/v1/batches"
    return wire.failure_bytes(Recorded("POST", path, {}, {}, b"", 0.0), failure)

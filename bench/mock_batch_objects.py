"""What the mock's batch APIs send: OpenAI's file and batch objects and its output / error file lines,
Anthropic's message batch object and its result lines, in the documented shapes (OpenAI Batch API and
Files reference; Anthropic Message Batches reference). Pure functions of a `Batch` (bench/mock_batch_state.py).
Result lines come in no order a client may rely on (a hash of the custom id), as both providers warn.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass

import orjson

from bench.mock_batch_state import Batch, Outcome
from bench.mock_types import JSON
from bench.mock_wire import ANTHROPIC_ERROR_TYPES

__all__ = ["MockFile", "anthropic_batch", "anthropic_results", "jsonl", "openai_batch", "openai_file",
           "openai_result_lines"]

DAY_S = 24 * 3600
EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."
CANCELLED_MESSAGE = "This request was not executed because the batch was cancelled."


@dataclass(frozen=True)
class MockFile:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: float


def openai_file(file: MockFile) -> JSON:
    return {"id": file.id, "object": "file", "bytes": len(file.content), "created_at": int(file.created_at),
            "filename": file.filename, "purpose": file.purpose, "status": "processed", "expires_at": None,
            "status_details": None}


def openai_batch(batch: Batch) -> JSON:
    counts = batch.counts()
    phase = batch.phase
    ended = int(batch.ended_at) if batch.ended_at is not None else None
    created = int(batch.created_at)
    return {
        "id": batch.id, "object": "batch", "endpoint": batch.endpoint,
        "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
        "input_file_id": batch.input_file_id, "completion_window": batch.completion_window, "status": phase,
        "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
        "created_at": created, "in_progress_at": created if phase != "validating" and not batch.errors else None,
        "expires_at": created + DAY_S,
        "finalizing_at": created if phase in ("finalizing", "completed") else None,
        "completed_at": ended if phase == "completed" else None,
        "failed_at": ended if phase == "failed" else None,
        "expired_at": ended if phase == "expired" else None,
        "cancelling_at": int(batch.cancel_at) if batch.cancel_at is not None else None,
        "cancelled_at": ended if phase == "cancelled" else None,
        "request_counts": {"total": len(batch.items), "completed": counts["succeeded"],
                           "failed": counts["errored"] + counts["expired"] + counts["canceled"]},
        "metadata": batch.metadata,
    }


def openai_result_lines(batch: Batch) -> tuple[list[JSON], list[JSON]]:
    """(output file lines, error file lines): replies with a 2xx status go to the output file; errored
    items (their status and error body), expired and cancelled ones to the error file."""
    output: list[JSON] = []
    errors: list[JSON] = []
    for number, (custom_id, _) in _any_order(batch):
        outcome = batch.outcomes.get(custom_id)
        if outcome is None:
            continue
        line: JSON = {"id": f"batch_req_{batch.id}_{number}", "custom_id": custom_id, "response": None,
                      "error": None}
        if outcome.state in ("succeeded", "errored"):
            body = outcome.body if outcome.state == "succeeded" else {"error": outcome.body}
            line["response"] = {"status_code": outcome.status, "request_id": f"req_{number}", "body": body}
        else:
            code, message = (("batch_expired", EXPIRED_MESSAGE) if outcome.state == "expired"
                             else ("batch_cancelled", CANCELLED_MESSAGE))
            line["error"] = {"code": code, "message": message}
        (output if outcome.state == "succeeded" else errors).append(line)
    return output, errors


def anthropic_batch(batch: Batch, base_url: str) -> JSON:
    counts = batch.counts()
    if batch.ended_at is not None:
        status = "ended"
    else:
        status = "canceling" if batch.cancel_at is not None else "in_progress"
    return {
        "id": batch.id, "type": "message_batch", "processing_status": status,
        "request_counts": {k: counts[k] for k in ("processing", "succeeded", "errored", "canceled", "expired")},
        "ended_at": _rfc3339(batch.ended_at), "created_at": _rfc3339(batch.created_at),
        "expires_at": _rfc3339(batch.created_at + DAY_S), "archived_at": None,
        "cancel_initiated_at": _rfc3339(batch.cancel_at),
        "results_url": f"{base_url}/v1/messages/batches/{batch.id}/results" if status == "ended" else None,
    }


def anthropic_results(batch: Batch) -> list[JSON]:
    return [{"custom_id": custom_id, "result": _anthropic_result(batch.outcomes[custom_id])}
            for _, (custom_id, _) in _any_order(batch) if custom_id in batch.outcomes]


def _any_order(batch: Batch) -> list[tuple[int, tuple[str, JSON]]]:
    """The items numbered from 1, in no order a client may rely on (both providers warn that results
    need not follow the input): sorted by a hash of the custom id, the same every run."""
    numbered = list(enumerate(batch.items, 1))
    return sorted(numbered, key=lambda entry: hashlib.sha256(entry[1][0].encode()).digest())


def _anthropic_result(outcome: Outcome) -> JSON:
    if outcome.state == "succeeded":
        return {"type": "succeeded", "message": outcome.body}
    if outcome.state == "errored":
        body = outcome.body if isinstance(outcome.body, dict) else {}
        kind = ANTHROPIC_ERROR_TYPES.get(outcome.status, "api_error")
        return {"type": "errored", "error": {"type": "error",
                                             "error": {"type": kind, "message": str(body.get("message", ""))}}}
    return {"type": outcome.state}


def jsonl(lines: list[JSON]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _rfc3339(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat().replace("+00:00", "Z")

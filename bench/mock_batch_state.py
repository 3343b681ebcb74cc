"""One batch inside the mock, in either dialect: its items, its clock-driven lifecycle, and each item's
outcome once its turn comes. Shared by the mock's batch routes (bench/mock_batches.py).

Time: item i of n is worked on at `created + latency * (i + 1) / n` (so a slow batch shows progress in
its counts), and the batch ends at `created + latency`. Items are answered in submission order, when the
mock's clock passes their time, by the live endpoint's own `answer` (responder + prefix cache), so a
batched item gets exactly the live reply for its body.

Outcomes (`settings`, fixed at creation): an item whose custom id is in `errored` (or whose id falls in
`error_fraction`, chosen by a hash so the same ids fail every run) errors with a server error; with
`expire_after=n` the batch expires at its end with only its first n items done; with `fail` it fails as
a whole (OpenAI: status `failed` with `errors`; Anthropic has no such status, so every item errors
with that message). A cancel answers the items already worked on; the batch shows `cancelling` to the
cancel and to one poll after it, then cancels the rest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import orjson

from bench import mock_bodies as bodies
from bench.mock_types import JSON, Dialect, Failure, Recorded, Reply, Response

__all__ = ["Batch", "BatchSettings", "Outcome"]

ItemState = Literal["succeeded", "errored", "expired", "canceled"]


@dataclass(frozen=True)
class BatchSettings:
    latency_s: float = 0.0
    """Seconds from creation until the batch ends (0: it has ended by the first poll)."""
    errored: frozenset[str] = frozenset()
    """Custom ids whose items error (a server error in the item's result)."""
    error_fraction: float = 0.0
    """This share of items errors too, chosen by a hash of the custom id (the same ids every run)."""
    expire_after: int | None = None
    """The batch expires at its end with only its first n items done; the rest expire."""
    fail: str = ""
    """The batch fails as a whole with this message (OpenAI `failed`; Anthropic: every item errors)."""


@dataclass(frozen=True)
class Outcome:
    state: ItemState
    status: int = 200
    body: JSON = None
    """The live reply body (succeeded) or the error body (errored)."""


@dataclass
class Batch:
    id: str
    dialect: Dialect
    created_at: float
    items: list[tuple[str, JSON]]
    """(custom id, request body) in submission order."""
    settings: BatchSettings
    endpoint: str = "/v1/chat/completions"
    input_file_id: str = ""
    completion_window: str = "24h"
    metadata: JSON = None
    errors: list[JSON] = field(default_factory=list)
    """OpenAI: why the batch failed validation (`errors.data`); the batch is then `failed`."""
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    cancel_at: float | None = None
    ended_at: float | None = None
    end_state: str = ""
    """completed, expired, cancelled or failed (OpenAI words) once ended."""
    shown: bool = False
    """Its object was shown after creation (until then OpenAI says `validating`)."""
    finalizing: bool = False
    cancelling_views: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None

    def advance(self, now: float, answer: Callable[[Recorded], Response], ids: Iterator[int]) -> None:
        """Work on every item whose time has come; move the batch on when its time has come."""
        if self.ended_at is not None:
            return
        if self.settings.fail and self.dialect == "openai":
            self.errors = self.errors or [{"code": "mock_failure", "message": self.settings.fail,
                                           "param": None, "line": None}]
        if self.errors:
            self._end(now, "failed")
            return
        stop = now if self.cancel_at is None else min(now, self.cancel_at)
        for index, (custom_id, body) in enumerate(self.items):
            if custom_id in self.outcomes:
                continue
            if self.due(index) > stop or self._expires_before(index):
                break
            self.outcomes[custom_id] = self._work(custom_id, body, answer, ids)
        if self.cancel_at is not None:
            self.cancelling_views += 1
            if self.cancelling_views > 2:  # `cancelling` shown by the cancel and one poll: cancelled now
                self._close_rest("canceled")
                self._end(now, "cancelled")
        elif now >= self.created_at + self.settings.latency_s:
            if self.settings.expire_after is not None:
                self._close_rest("expired")
                self._end(now, "expired")
            elif self.dialect == "openai" and not self.finalizing:
                self.finalizing = True  # OpenAI shows `finalizing` (output files being written) once
            else:
                self._end(now, "completed")

    @property
    def phase(self) -> str:
        """OpenAI's word for where it is: validating, in_progress, finalizing, cancelling or its end."""
        if self.ended_at is not None:
            return self.end_state
        if self.cancel_at is not None:
            return "cancelling"
        if self.finalizing:
            return "finalizing"
        return "in_progress" if self.shown else "validating"

    def due(self, index: int) -> float:
        return self.created_at + self.settings.latency_s * (index + 1) / max(1, len(self.items))

    def counts(self) -> dict[str, int]:
        """Items per state so far; `processing` for those not yet worked on."""
        found = {"processing": 0, "succeeded": 0, "errored": 0, "expired": 0, "canceled": 0}
        for custom_id, _ in self.items:
            outcome = self.outcomes.get(custom_id)
            found[outcome.state if outcome else "processing"] += 1
        return found

    def _expires_before(self, index: int) -> bool:
        return self.settings.expire_after is not None and index >= self.settings.expire_after

    def _work(self, custom_id: str, body: JSON, answer: Callable[[Recorded], Response], ids: Iterator[int]
              ) -> Outcome:
        if self.settings.fail:  # Anthropic: a failed batch is one whose every item errored
            return Outcome("errored", 500, {"message": self.settings.fail, "type": "api_error"})
        if custom_id in self.settings.errored or _in_fraction(custom_id, self.settings.error_fraction):
            return Outcome("errored", 500, {"message": f"mock error for {custom_id}", "type": "server_error"})
        path = "/v1/messages" if self.dialect == "anthropic" else self.endpoint
        raw = orjson.dumps(body)
        request = Recorded("POST", path, {}, body, raw, 0.0)
        response = answer(request)
        if isinstance(response, Failure):
            error = response.body.get("error", response.body) if isinstance(response.body, dict) else None
            return Outcome("errored", response.status,
                           error or {"message": response.message, "type": "mock_error"})
        assert isinstance(response, Reply)
        return Outcome("succeeded", 200, bodies.whole(request, response, ids))

    def _close_rest(self, state: ItemState) -> None:
        for custom_id, _ in self.items:
            self.outcomes.setdefault(custom_id, Outcome(state))

    def _end(self, now: float, state: str) -> None:
        self.ended_at, self.end_state = now, state


def _in_fraction(custom_id: str, fraction: float) -> bool:
    if fraction <= 0:
        return False
    digest = int.from_bytes(hashlib.sha256(custom_id.encode()).digest()[:4], "big")
    return digest / 2**32 < fraction

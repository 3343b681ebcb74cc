"""A provider's batch API as the runner sees it: many request bodies submitted under custom ids in one
batch, polled until it ends, its results read back by custom id, or the batch cancelled.

OpenAI's Batch API (`/v1/files` + `/v1/batches`, also offered by some OpenAI-compatible servers) and
Anthropic's Message Batches (`/v1/messages/batches`) both fit this shape; each has a backend module.
A custom id is at most 64 characters of `[A-Za-z0-9_-]` (Anthropic's rule, the stricter of the two):
the runner uses the request hash (64 hex digits), so a resumed run recognises its own requests.

Results are parsed exactly as the live path parses a non-streamed reply (the same turn, the same usage
fields), so a batched episode's transcript has the live one's shape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from simulators.model_api import ModelRequest, ModelResponse
from simulators.protocol import JSON

__all__ = ["BatchBackend", "BatchItem", "BatchResult", "BatchStatus", "ItemOutcome"]

ItemOutcome = Literal["succeeded", "errored", "expired", "canceled"]


@dataclass(frozen=True)
class BatchItem:
    custom_id: str
    body: Mapping[str, JSON]
    """The request body as `BatchBackend.body` built it (non-streamed)."""


@dataclass(frozen=True)
class BatchStatus:
    batch_id: str
    ended: bool
    """True once results can be read to the end: completed, expired, cancelled or failed."""
    provider_status: str
    """The provider's own word (OpenAI's `status`, Anthropic's `processing_status`), for messages."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """Items per provider-reported state (e.g. succeeded, errored, expired, canceled, processing)."""
    failed_reason: str = ""
    """Why the batch as a whole failed (OpenAI `failed` with `errors`); empty otherwise."""


@dataclass(frozen=True)
class BatchResult:
    custom_id: str
    outcome: ItemOutcome
    response: ModelResponse | None = None
    """Set when `outcome` is succeeded: the turn and usage, parsed as the live path parses them."""
    error: str = ""
    """The provider's message for an errored item (its type and text); empty otherwise."""


class BatchBackend(Protocol):
    """One endpoint's batch API for one model. Failures of the HTTP calls themselves (auth, transport,
    rate limits) are retried and classified by the same retry loop and taxonomy as live calls."""

    @property
    def name(self) -> str: ...

    def body(self, request: ModelRequest) -> dict[str, JSON]:
        """The item body for `request`: what the live client would send, never streamed."""
        ...

    async def submit(self, items: Sequence[BatchItem], label: str) -> str:
        """Create one batch of `items`; returns its id. `label` (at most 64 characters) is attached where
        the API allows (OpenAI metadata) so `find` can recognise a batch whose id was never recorded."""
        ...

    async def find(self, label: str) -> str | None:
        """The id of a batch this backend submitted under `label`, if the provider can list it; None
        when it cannot say (then the caller submits again, and says so)."""
        ...

    async def status(self, batch_id: str) -> BatchStatus: ...

    def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """Every item of an ended batch, each once (output and error files alike)."""
        ...

    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to cancel; already-cancelled or ended batches are not an error."""
        ...

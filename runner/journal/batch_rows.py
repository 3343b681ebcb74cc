"""Typed rows of the two batch tables (`provider_batches`, `batch_items`, schema 10) and their writers.

Each row's fields are its table's columns in order, so a row is its own parameters. The writers append
to a `Batch` (committed with whatever else it holds); both replace the row under its primary key, as a
batch moves 'submitting' -> 'submitted' -> 'ended' -> 'collected' and an item from 'pending' to its result.
"""

from __future__ import annotations

from typing import NamedTuple

from runner.journal.batch import Batch, Statement

__all__ = ["BatchItemRow", "ProviderBatchRow", "write_batch_item", "write_provider_batch"]


class ProviderBatchRow(NamedTuple):
    """One batch sent to a provider's batch API. `endpoint` is the base URL, never a key."""

    run_id: str
    label: str
    """The run's own name for the batch, journaled before the provider is asked to create it."""
    api: str
    """Which batch API: 'openai' (files + batches) or 'anthropic' (message batches)."""
    endpoint: str
    model: str
    batch_id: str
    """The provider's id; '' until the provider created the batch."""
    status: str
    """'submitting', 'submitted', 'ended', 'collected' or 'cancelled'."""
    items: int
    round: int
    resubmission: int
    """1 for a batch of items resubmitted after they expired, errored or were canceled once."""
    submitted_at: float
    ended_at: float | None = None
    provider_status: str = ""


class BatchItemRow(NamedTuple):
    """One request of a batch: `custom_id` is the request's hash; `answer` the encoded response."""

    run_id: str
    label: str
    custom_id: str
    unit_id: str
    status: str = "pending"
    """'pending', 'succeeded', 'errored', 'expired' or 'canceled'."""
    answer: bytes | None = None
    error: str = ""


def _replace(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


_PROVIDER_BATCH = _replace("provider_batches", ProviderBatchRow._fields)
_BATCH_ITEM = _replace("batch_items", BatchItemRow._fields)


def write_provider_batch(batch: Batch, row: ProviderBatchRow) -> Batch:
    """The batch as it stands now (its row replaced whole)."""
    batch.statements.append(Statement("provider_batch", _PROVIDER_BATCH, row))
    return batch


def write_batch_item(batch: Batch, row: BatchItemRow) -> Batch:
    """One item as it stands now (its row replaced whole)."""
    batch.statements.append(Statement("batch_item", _BATCH_ITEM, row))
    return batch

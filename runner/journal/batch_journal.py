"""The named queries over a run's provider batches (`--batch tests`): what a start or resume must pick up
(batches not yet collected, results journaled but never used, items that already failed), and the
figures a report or a test counts.

A mixin of `Reader` (runner.journal.reader), like `CallQueries`. The rows it returns are its own
(`ProviderBatchRow`, `BatchItemRow`): only the batcher and the batch figures read them.
"""

from __future__ import annotations

from typing import NamedTuple

from runner.journal.query_group import QueryGroup

__all__ = ["BatchItemRow", "BatchQueries", "ProviderBatchRow"]


class ProviderBatchRow(NamedTuple):
    run_id: str
    label: str
    api: str
    endpoint: str
    model: str
    batch_id: str
    status: str
    items: int
    round: int
    resubmission: int
    submitted_at: float
    ended_at: float | None
    provider_status: str


class BatchItemRow(NamedTuple):
    label: str
    custom_id: str
    unit_id: str
    status: str
    answer: bytes | None
    error: str


_BATCH_COLUMNS = ", ".join(ProviderBatchRow._fields)
_ITEM_COLUMNS = ", ".join(BatchItemRow._fields)
_BATCHES = f"SELECT {_BATCH_COLUMNS} FROM provider_batches WHERE run_id = ? ORDER BY submitted_at, label"
_OPEN_BATCHES = (f"SELECT {_BATCH_COLUMNS} FROM provider_batches WHERE run_id = ? "
                 "AND status IN ('submitting', 'submitted', 'ended') ORDER BY submitted_at, label")
_ITEMS = f"SELECT {_ITEM_COLUMNS} FROM batch_items WHERE run_id = ? ORDER BY rowid"
_ITEMS_OF = f"SELECT {_ITEM_COLUMNS} FROM batch_items WHERE run_id = ? AND label = ? ORDER BY rowid"


class BatchQueries(QueryGroup):
    async def provider_batches(self, run_id: str) -> list[ProviderBatchRow]:
        """Every batch the run submitted (or was about to), oldest first."""
        return [ProviderBatchRow._make(row) for row in await self._rows(_BATCHES, (run_id,))]

    async def open_batches(self, run_id: str) -> list[ProviderBatchRow]:
        """The run's batches whose results are not all journaled yet ('submitting', 'submitted', 'ended'):
        what a resume recovers (by label, or by polling the same id)."""
        return [ProviderBatchRow._make(row) for row in await self._rows(_OPEN_BATCHES, (run_id,))]

    async def batch_items(self, run_id: str, label: str | None = None) -> list[BatchItemRow]:
        """The items of one batch (`label`), or of every batch of the run, in submission order."""
        if label is None:
            return [BatchItemRow._make(row) for row in await self._rows(_ITEMS, (run_id,))]
        return [BatchItemRow._make(row) for row in await self._rows(_ITEMS_OF, (run_id, label))]

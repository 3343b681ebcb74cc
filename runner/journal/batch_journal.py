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
# Succeeded items whose answer no call row holds yet: the episode that waited on it died first.
_UNUSED_ANSWERS = """
SELECT i.custom_id, i.answer FROM batch_items i
WHERE i.run_id = ?1 AND i.status = 'succeeded' AND i.answer IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM model_calls c WHERE c.run_id = ?1 AND c.request_hash = i.custom_id)
"""
# A batch the run itself cancelled (its budget stop, or one never created) is no failed try of its items.
_FAILED_TRIES = """
SELECT i.custom_id, count(*) FROM batch_items i
JOIN provider_batches b ON b.run_id = i.run_id AND b.label = i.label
WHERE i.run_id = ? AND i.status IN ('errored', 'expired', 'canceled') AND b.status != 'cancelled'
GROUP BY i.custom_id
"""


class BatchQueries(QueryGroup):
    async def provider_batches(self, run_id: str) -> list[ProviderBatchRow]:
        """Every batch the run submitted (or was about to), oldest first."""
        return [ProviderBatchRow._make(row) for row in await self._rows(_BATCHES, (run_id,))]

    async def open_batches(self, run_id: str) -> list[ProviderBatchRow]:
        """The run's batches whose results are not all journaled yet ('submitting', 'submitted', 'ended'):
        what a resume recovers (by label, or by polling the same id)."""
        return [ProviderBatchRow._make(row) for row in await self._rows(_OPEN_BATCHES, (run_id,))]

    async def unused_answers(self, run_id: str) -> dict[str, bytes]:
        """Answers journaled from a batch that no call row used yet, by custom id (a resume hands them
        out without asking the provider again)."""
        return {row[0]: row[1] for row in await self._rows(_UNUSED_ANSWERS, (run_id,))}

    async def failed_tries(self, run_id: str) -> dict[str, int]:
        """Per custom id, the batches its item failed in (errored, expired, canceled by the provider)."""
        return {row[0]: int(row[1]) for row in await self._rows(_FAILED_TRIES, (run_id,))}

    async def batch_items(self, run_id: str, label: str | None = None) -> list[BatchItemRow]:
        """The items of one batch (`label`), or of every batch of the run, in submission order."""
        if label is None:
            return [BatchItemRow._make(row) for row in await self._rows(_ITEMS, (run_id,))]
        return [BatchItemRow._make(row) for row in await self._rows(_ITEMS_OF, (run_id, label))]

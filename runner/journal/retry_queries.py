"""The named queries of retries: how many attempts each stream's calls needed, and why they failed.

A mixin of `Reader` (runner.journal.reader), like `ViewQueries`. A call's `retried` column holds the
failure class of each failed attempt ('timeout,server error'); replayed answers (from the cache) made
no attempt. A stream is a model and method, as in the report; a call outside any unit (a method's own
update) belongs to its stream through the units table.
"""

from __future__ import annotations

from collections import defaultdict

from runner.journal.query_group import QueryGroup
from runner.journal.read_rows import StreamRetries

__all__ = ["RetryQueries"]

# Occurrences of 'timeout' in the comma-separated classes: no other class name contains the word.
_TIMEOUTS = "(length(c.retried) - length(replace(c.retried, 'timeout', ''))) / 7"
_STREAM_RETRIES = f"""
SELECT coalesce(u.model, s.model), coalesce(u.method, s.method), count(*),
       sum(c.retried != '' AND c.status = 'ok'), sum(max(c.attempts - 1, 0)), sum({_TIMEOUTS}),
       sum(c.status != 'ok'), c.run_id
FROM model_calls c
LEFT JOIN units u ON u.run_id = c.run_id AND u.unit_id = c.unit_id
LEFT JOIN (SELECT DISTINCT run_id, stream_id, model, method FROM units) s
       ON s.run_id = c.run_id AND s.stream_id = c.stream_id
WHERE c.from_cache = 0 AND c.purpose != 'probe' AND (?1 IS NULL OR c.run_id = ?1)
GROUP BY c.run_id, 1, 2 ORDER BY c.run_id, 1, 2
"""


class RetryQueries(QueryGroup):
    """Retry figures per stream; `Reader` supplies `_rows`."""

    async def stream_retries(self, run_id: str) -> list[StreamRetries]:
        """Per model and method of a run: its calls sent, the ones answered after a retry, the failed
        attempts and, of those, timeouts (stalls included), and the calls that failed for good."""
        return (await self._retries(run_id)).get(run_id, [])

    async def stream_retries_by_run(self) -> dict[str, list[StreamRetries]]:
        """`stream_retries` of every run in the journal, in one read (`runs`)."""
        return await self._retries(None)

    async def _retries(self, run_id: str | None) -> dict[str, list[StreamRetries]]:
        found: dict[str, list[StreamRetries]] = defaultdict(list)
        for model, method, *counts, run in await self._rows(_STREAM_RETRIES, (run_id,)):
            if model is None:  # a call of no stream (the run's probe is left out above)
                continue
            found[str(run)].append(StreamRetries(str(model), str(method), *(int(v or 0) for v in counts)))
        return dict(found)

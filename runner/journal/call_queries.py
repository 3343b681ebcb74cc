"""The named queries over a run's model calls: usage by purpose, the endpoint pools' replicas, prompt-cache
tokens, and each episode's and method's tokens per model called (what projections and `estimate` measure).

A mixin of `Reader` (runner.journal.reader), like `ViewQueries`. A replayed answer (from the response
cache) sent nothing, so token sums count only calls with `from_cache = 0`.
"""

from __future__ import annotations

from collections import defaultdict

from runner.journal.query_group import QueryGroup
from runner.journal.read_rows import CacheUsage, CallUsage, EpisodeCalls, MethodCalls, ReplicaCalls, StreamCalls

__all__ = ["CallQueries"]

# A call belongs to its unit's stream; calls outside any unit (a method's update) fall back to their
# stream id, mapped through the units table so model names containing '/' are never split. A call
# counts as finished when it was answered and its unit's episode finished (or it has no unit).
_CALL_USAGE = """
SELECT coalesce(u.model, s.model), coalesce(u.method, s.method), c.purpose,
       c.status = 'ok' AND (u.unit_id IS NULL OR e.unit_id IS NOT NULL) AS finished,
       sum(c.input_tokens), sum(c.output_tokens), sum(c.cost_usd), sum(c.usage_estimated)
FROM model_calls c
LEFT JOIN units u ON u.run_id = c.run_id AND u.unit_id = c.unit_id
LEFT JOIN episodes e ON e.run_id = c.run_id AND e.unit_id = c.unit_id
LEFT JOIN (SELECT DISTINCT stream_id, model, method FROM units WHERE run_id = ?) s
       ON s.stream_id = c.stream_id
WHERE c.run_id = ?
GROUP BY 1, 2, 3, 4
"""
_REPLICA_COUNTS = """
SELECT model, replica, sum(status = 'ok'), sum(status != 'ok'), sum(status = 'ok' AND attempts > 1),
       max(CASE WHEN status = 'ok' THEN created_at END)"""
_REPLICA_CALLS = _REPLICA_COUNTS + """
FROM model_calls WHERE run_id = ? AND replica != '' GROUP BY model, replica ORDER BY model, replica
"""
_REPLICA_CALLS_OF_ALL = _REPLICA_COUNTS + """, run_id
FROM model_calls WHERE replica != '' GROUP BY run_id, model, replica ORDER BY run_id, model, replica
"""
# Prompt-cache figures: every call sent (a replayed answer sent nothing), by stream and the model called.
_CACHE_USAGE = """
SELECT coalesce(u.model, s.model), coalesce(u.method, s.method), c.model, sum(c.input_tokens),
       sum(c.cached_input_tokens), sum(c.cache_write_tokens), sum(c.output_tokens), sum(c.cache_write_1h_tokens)
FROM model_calls c
LEFT JOIN units u ON u.run_id = c.run_id AND u.unit_id = c.unit_id
LEFT JOIN (SELECT DISTINCT stream_id, model, method FROM units WHERE run_id = ?1) s ON s.stream_id = c.stream_id
WHERE c.run_id = ?1 AND c.from_cache = 0
GROUP BY 1, 2, 3
"""
# Per stream and model called: spend over every call, tokens over the calls sent.
_STREAM_CALLS = """
SELECT stream_id, model, sum(cost_usd), sum(input_tokens * (from_cache = 0)),
       sum(cached_input_tokens * (from_cache = 0)), sum(cache_write_tokens * (from_cache = 0)),
       sum(output_tokens * (from_cache = 0)), sum(cache_write_1h_tokens * (from_cache = 0))
FROM model_calls WHERE run_id = ? AND stream_id != '' GROUP BY stream_id, model
"""
_CACHE_USAGE_OF_ALL = """
SELECT run_id, model, sum(input_tokens), sum(cached_input_tokens), sum(cache_write_tokens), sum(output_tokens),
       sum(cache_write_1h_tokens)
FROM model_calls WHERE from_cache = 0 GROUP BY run_id, model
"""
# Each finished episode with its calls' tokens per model called (a replayed answer sent nothing); an
# episode without journaled calls (the offline model) stands in with its own tokens.
_EPISODE_CALLS = """
SELECT u.unit_id, u.model, u.method, u.scenario, u.phase, e.turns, c.model,
       coalesce(sum(c.input_tokens), e.input_tokens), coalesce(sum(c.cached_input_tokens), e.cached_input_tokens),
       coalesce(sum(c.cache_write_tokens), 0), coalesce(sum(c.output_tokens), e.output_tokens),
       coalesce(sum(c.cache_write_1h_tokens), 0)
FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id
LEFT JOIN model_calls c ON c.run_id = u.run_id AND c.unit_id = u.unit_id AND c.from_cache = 0
WHERE e.run_id = ?
GROUP BY u.unit_id, c.model
ORDER BY min(u.rowid)
"""
_METHOD_CALLS = """
SELECT s.model, s.method, s.scenario, c.model, sum(c.input_tokens), sum(c.cached_input_tokens),
       sum(c.cache_write_tokens), sum(c.output_tokens), sum(c.cache_write_1h_tokens)
FROM model_calls c
JOIN (SELECT DISTINCT stream_id, model, method, scenario FROM units WHERE run_id = ?1) s ON s.stream_id = c.stream_id
WHERE c.run_id = ?1 AND c.purpose = 'method' AND c.from_cache = 0
GROUP BY 1, 2, 3, 4
"""
# Per stream: the method's own calls (every journaled one, a replayed answer too), tokens and spend.
_METHOD_SUMS = """
SELECT stream_id, count(*), sum(input_tokens), sum(output_tokens), sum(cost_usd)
FROM model_calls WHERE run_id = ? AND purpose = 'method' GROUP BY stream_id
"""


class CallQueries(QueryGroup):
    """Token, cost and replica figures of model calls; `Reader` supplies `_rows`."""

    async def call_usage(self, run_id: str) -> list[CallUsage]:
        return [CallUsage(model, method, purpose, bool(finished), *rest)
                for model, method, purpose, finished, *rest in await self._rows(_CALL_USAGE, (run_id, run_id))]

    async def replica_calls(self, run_id: str) -> list[ReplicaCalls]:
        """Per model and replica of an endpoint pool: calls answered and failed (none for one endpoint)."""
        return [ReplicaCalls._make(row) for row in await self._rows(_REPLICA_CALLS, (run_id,))]

    async def replica_calls_by_run(self) -> dict[str, list[ReplicaCalls]]:
        """`replica_calls` of every run in the journal, in one read (`runs`)."""
        found: dict[str, list[ReplicaCalls]] = defaultdict(list)
        for *counts, run_id in await self._rows(_REPLICA_CALLS_OF_ALL):
            found[str(run_id)].append(ReplicaCalls._make(counts))
        return dict(found)

    async def cache_usage(self, run_id: str) -> list[CacheUsage]:
        """Prompt tokens read from and written to the provider's cache, per stream and model called."""
        return [CacheUsage(row[0], row[1], str(row[2]), *(int(v or 0) for v in row[3:]))
                for row in await self._rows(_CACHE_USAGE, (run_id,))]

    async def stream_calls(self, run_id: str) -> list[StreamCalls]:
        """Each stream's calls per model called: spend and tokens (a resumed dashboard's starting point)."""
        return [StreamCalls(str(row[0]), str(row[1]), float(row[2] or 0.0), *(int(v or 0) for v in row[3:]))
                for row in await self._rows(_STREAM_CALLS, (run_id,))]

    async def cache_usage_by_run(self) -> dict[str, list[CacheUsage]]:
        """Per run, per model called (no stream): `runs`' cache column."""
        found: dict[str, list[CacheUsage]] = defaultdict(list)
        for row in await self._rows(_CACHE_USAGE_OF_ALL):
            found[str(row[0])].append(CacheUsage(None, None, str(row[1]), *(int(v or 0) for v in row[2:])))
        return dict(found)

    async def episode_calls(self, run_id: str) -> list[EpisodeCalls]:
        """Every finished episode's tokens per model called, in planning order (a projection's measure)."""
        return [EpisodeCalls(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), int(r[5]),
                             None if r[6] is None else str(r[6]), *(int(v or 0) for v in r[7:]))
                for r in await self._rows(_EPISODE_CALLS, (run_id,))]

    async def method_sums(self, run_id: str) -> dict[str, tuple[int, int, int, float]]:
        """Per stream: its method's own calls, input tokens, output tokens and USD."""
        return {str(stream): (int(calls), int(tokens_in or 0), int(tokens_out or 0), float(usd or 0.0))
                for stream, calls, tokens_in, tokens_out, usd in await self._rows(_METHOD_SUMS, (run_id,))}

    async def method_calls(self, run_id: str) -> list[MethodCalls]:
        """The learning methods' own calls per stream and model called."""
        return [MethodCalls(str(r[0]), str(r[1]), str(r[2]), str(r[3]), *(int(v or 0) for v in r[4:]))
                for r in await self._rows(_METHOD_CALLS, (run_id,))]

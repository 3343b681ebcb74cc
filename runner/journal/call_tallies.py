"""A run's model calls added up as the report and `runs` show them: per stream, sent and retried
(`RetryCounts`, from `StreamRetries`); per endpoint replica, answered and failed (`ReplicaUse`, from
`ReplicaCalls`). Dataclasses, so a report's JSON names their fields. Here rather than in
`runner.report.model`, so `runs` reads them without loading the report (numpy, the methods)."""

from __future__ import annotations

from dataclasses import dataclass

from runner.journal.read_rows import StreamRetries

__all__ = ["ReplicaUse", "RetryCounts"]


@dataclass(frozen=True)
class RetryCounts:
    """One stream's (model and method) calls sent, retried, timed out (`StreamRetries`)."""

    model: str
    method: str
    calls: int
    retried_calls: int
    retries: int
    timeouts: int
    failed_calls: int

    @classmethod
    def of(cls, rows: list[StreamRetries]) -> list[RetryCounts]:
        return [cls(*row) for row in rows]


@dataclass(frozen=True)
class ReplicaUse:
    model: str
    replica: str
    answered: int
    failed: int
    """Calls that failed on this replica last (a failover's earlier tries are not counted)."""

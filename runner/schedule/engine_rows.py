"""A finished episode's audit row and a stream's dashboard row, as the engine makes them (kept apart so
the engine stays one concern: running streams)."""

from __future__ import annotations

import orjson

from runner.config.plan import Stream
from runner.display.progress import StreamProgress
from runner.journal import EpisodeAuditRow
from runner.schedule.episode import EpisodeResult

__all__ = ["audit_row", "stream_progress"]


def audit_row(run_id: str, unit_id: str, stream_id: str, result: EpisodeResult) -> EpisodeAuditRow:
    audit = result.audit
    assert audit is not None
    unsafe = audit.unsafe
    return EpisodeAuditRow(run_id, unit_id, stream_id, audit.state_match.passed, audit.state_unchanged.passed,
                           unsafe.proposed, unsafe.executed, unsafe.state_changing, audit.escalated,
                           orjson.dumps(audit.to_json()))


def stream_progress(stream: Stream) -> StreamProgress:
    return StreamProgress(stream_id=stream.stream_id, model=stream.model, method=stream.method,
                          scenario=stream.scenario.name, serving_total=len(stream.serving),
                          test_total=len(stream.test) * stream.repeats, windows=len(stream.windows()),
                          replica=stream.replica)


"""A finished episode's journal rows and a stream's dashboard row, as the engine makes them (kept apart so
the engine stays one concern: running streams)."""

from __future__ import annotations

import time

import orjson

from runner.config.plan import Stream
from runner.display.progress import StreamProgress
from runner.journal import Batch, EpisodeAuditRow, EpisodeRow
from runner.schedule.episode import EpisodeResult
from simulators.protocol import Task

__all__ = ["audit_row", "episode_rows", "stream_progress"]


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



def episode_rows(batch: Batch, run_id: str, stream: Stream, task: Task, result: EpisodeResult,
                 unit_id: str | None = None) -> None:
    """A finished episode's rows (episode, audit, unit done) into `batch`."""
    unit_id = unit_id or stream.unit_id(task)
    usage = result.usage
    batch.episode(EpisodeRow(
        run_id, unit_id, stream.stream_id, result.grade.reward, result.grade.judge, task.category,
        result.turns, result.tool_calls, usage.input_tokens, usage.cached_input_tokens, usage.output_tokens,
        result.cost_usd, result.latency_s, result.record.end_reason, orjson.dumps(result.record),
        orjson.dumps(result.grade.details), time.time(),
    ))
    if result.audit is not None:
        batch.episode_audit(audit_row(run_id, unit_id, stream.stream_id, result))
    batch.unit_done(run_id, unit_id)

"""The report's word on methods as guests: per stream, the time its method took and whether it failed.

For every stream whose method's calls were timed, that called a model itself or that stopped with
`method_error`: p50 and p95 of its `context` and `learn` seconds (as journaled by
`runner.schedule.method_time`), its own model calls with their tokens and cost (what it adds to the
agent's), and, for a failed stream, its one line (`runner.schedule.method_errors`). A stream whose
method failed and then got through on a resume shows `resolved`.
"""

from __future__ import annotations

from runner.journal import Reader
from runner.report.model import MethodStream, percentile
from runner.schedule.method_errors import journaled_failures
from runner.schedule.method_time import journaled_times

__all__ = ["METHOD_TITLE", "method_streams", "method_table"]

METHOD_TITLE = ("Method time, model calls and failures (seconds per call of the method itself, p50 / p95; learn "
                "includes its model calls; the method's own model calls, their tokens and cost; a stream stopped "
                "by its method says where)")


async def method_streams(reader: Reader, run_id: str) -> list[MethodStream]:
    times = await journaled_times(reader, run_id)
    failures = await journaled_failures(reader, run_id)
    sums = await reader.method_sums(run_id)
    rows = []
    for stream_id in sorted(set(times) | set(failures) | set(sums)):
        timed, failed = times.get(stream_id), failures.get(stream_id)
        context_s, learn_s = (timed.context_s, timed.learn_s) if timed else ([], [])
        outcome = "ok" if failed is None else "resolved" if failed.resolved else "method_error"
        rows.append(MethodStream(stream_id, len(context_s), percentile(context_s, 50), percentile(context_s, 95),
                                 len(learn_s), percentile(learn_s, 50), percentile(learn_s, 95), outcome,
                                 failed.line() if failed else "", timed.boundary if timed else "",
                                 *sums.get(stream_id, (0, 0, 0, 0.0))))
    return rows


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def method_table(rows: list[MethodStream]) -> tuple[list[str], list[list[str]]]:
    """The section's table: one row per stream."""
    headers = ["stream", "boundary", "contexts", "context p50 / p95 s", "learns", "learn p50 / p95 s",
               "method calls", "in / out tokens", "method $", "outcome"]
    body = [[r.stream_id, r.boundary.split(" (")[0] or "-", str(r.contexts),
             f"{_seconds(r.context_p50_s)} / {_seconds(r.context_p95_s)}",
             str(r.learns), f"{_seconds(r.learn_p50_s)} / {_seconds(r.learn_p95_s)}",
             f"{r.method_calls:,}", f"{r.method_input_tokens:,} / {r.method_output_tokens:,}", f"{r.method_usd:.4f}",
             r.outcome if not r.failure else f"{r.outcome}: {r.failure.split('), ', 1)[-1]}"] for r in rows]
    return headers, body

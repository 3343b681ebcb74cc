"""Time belongs to the method: a context past its limit stops its stream alone (`method_error`, the
limit named), and the report counts each stream's context and learn calls (one context per episode,
one learn per serving block: checked against the journal's own episode rows) with their p50 / p95."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio

from runner.report.build import build_report
from tests.runner.test_kill_resume import only_run
from tests.runner.workers.test_guest_failures import failure_lines
from tests.runner.workers.test_guest_runs import guest_file, run


def episodes_per_stream(journal: Path) -> dict[str, tuple[int, int]]:
    """(all episodes, serving episodes) per stream, from the journal's episode rows."""
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT stream_id, count(*), sum(unit_id LIKE '%|serving|%') FROM episodes "
                          "GROUP BY stream_id").fetchall()
    return {stream: (int(total), int(serving)) for stream, total, serving in rows}


def test_a_context_past_its_limit_stops_its_stream_and_the_report_times_every_call(built_suite: Path,
                                                                                    tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    journal = tmp_path / "slow.sqlite"
    done = run(built_suite, journal, f"blind,counter={guests}:COUNTER,slow={guests}:SLOW", "--method-context-limit",
               "0.5", scenarios="retail_l1")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    (line,) = failure_lines(done.stdout)
    assert "|slow|" in line and "context" in line and "limit of 0.5 s" in line, line
    report = anyio.run(build_report, journal, only_run(journal)[0])
    shown = {row.stream_id: row for row in report.method_streams}
    counted = episodes_per_stream(journal)
    counter = shown["scripted|counter|retail_l1"]
    assert (counter.contexts, counter.learns) == counted["scripted|counter|retail_l1"]
    assert counter.outcome == "ok" and 0 <= counter.context_p50_s <= counter.context_p95_s  # type: ignore[operator]
    slow = shown["scripted|slow|retail_l1"]
    assert slow.outcome == "method_error" and "limit of 0.5 s" in slow.failure
    assert shown["scripted|blind|retail_l1"].contexts == counted["scripted|blind|retail_l1"][0]  # in-process: timed too

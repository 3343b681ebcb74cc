"""What `run` and `resume` print when a run ends: the leaderboard and what to run next, in a screen.

The full report (tokens, cost, latency, settings, the per-window table, audits, provenance) is one
command away, `shiftbench report RUN_ID`, and the summary says so; it prints only the line of the
heading a reader needs now (status, spend, where the journal is) and the scores table. Every line
fits the terminal's width: the table through `runner.common.tables`, a command too long for it
broken between its words with a shell continuation, so it still pastes as one command.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from runner.common.money import usd
from runner.common.tables import wrap_prose
from runner.report.model import Report
from runner.report.sections import SCORES_ALIGN, score_table
from runner.report.text import cut_table

__all__ = ["LEADERBOARD_ROWS", "command_lines", "render_summary"]

BOARD_TITLE = "Scores (reward x 100 on test tasks; H hidden, F fully specified; 95% intervals)"
"""The report's scores title, said in one line of 80 columns."""
LEADERBOARD_ROWS = 40
"""Streams on the summary's leaderboard at most; `report` has them all."""


def render_summary(report: Report, width: int | None, journal_flag: Sequence[str] = ()) -> str:
    """`journal_flag`: the `--journal PATH` the printed commands need (empty for the default journal)."""
    status = report.status + (f" ({report.stop_reason})" if report.stop_reason else "")
    spend = f"spend ${report.cost_usd.total:.4f}" + ("" if report.budget_usd is None
                                                     else f" of cap {usd(report.budget_usd)}")
    tests = sum(s.test_done for s in report.streams)
    scenarios = ", ".join(dict.fromkeys(name for s in report.streams for name in s.settings))
    report_command = " ".join(["shiftbench", "report", report.run_id, *journal_flag])
    lines = [wrap_prose(f"run {report.run_id}: {status}; {tests} test episodes; {spend}", width),
             wrap_prose(f"scenarios {scenarios or '-'}", width),
             wrap_prose(f"journal {report.journal}", width), "",
             wrap_prose(BOARD_TITLE, width),
             *cut_table(score_table(report), SCORES_ALIGN, width, LEADERBOARD_ROWS,
                        f"`{report_command}` lists every stream"), "",
             "Next:"]
    for words, what in _next_steps(report, list(journal_flag)):
        lines += [*command_lines(words, width, "  "), wrap_prose(f"      {what}", width, "")]
    return "\n".join(lines)


def _next_steps(report: Report, journal: list[str]) -> list[tuple[list[str], str]]:
    run = report.run_id
    steps = [(["shiftbench", "report", run, *journal],
              "tokens, cost, latency p50/p95, settings, per-window scores, audits"),
             (["shiftbench", "report", run, "--html", "report.html", *journal],
              "the same as one page, with learning curves and the failed episodes")]
    if any(s.test_done > 0 and (s.avg_h or 0) < 100 for s in report.streams):
        steps.append((["shiftbench", "show", run, "--failed", *journal],
                      "the episodes that fell short of the full score, turn by turn"))
    if len(report.streams) >= 2:
        a, b = report.streams[-1], report.streams[0]
        steps.append((["shiftbench", "compare", f"{run}:{a.model}/{a.method}", f"{run}:{b.model}/{b.method}",
                       *journal], "paired differences of two streams over the same test tasks"))
    return steps


def command_lines(words: Sequence[str], width: int | None, indent: str) -> list[str]:
    """A shell command on one line, or, when it is wider than `width`, broken between words with a
    trailing backslash so it still pastes as one command."""
    quoted = [shlex.quote(word) for word in words]
    one = indent + " ".join(quoted)
    if width is None or len(one) <= width:
        return [one]
    lines, current = [], indent + quoted[0]
    for word in quoted[1:]:
        if len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = indent + "    " + word
        else:
            current += " " + word
    return [*lines, current]

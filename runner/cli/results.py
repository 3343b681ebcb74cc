"""`runs` and `report`: which runs a journal holds, and what one of them measured, in every format.

`report --html` writes one self-contained page (the `html` extra); the failed episodes it links are
read once here, at most FAILED_SHOWN_PER_SETTING per setting.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from runner.cli.parsing import Command, add_journal, add_limit, journal_path, limit_of, run_async
from runner.cli.workbench import add_runs_rm, cmd_runs_rm
from runner.common.files import write_atomically
from runner.common.optional import load_extra
from runner.common.tables import terminal_width
from simulators.errors import ShiftbenchInputError

__all__ = ["FAILED_SHOWN_PER_SETTING", "REPORT_ROWS", "RESULT_COMMANDS", "RUNS_SHOWN", "add_result_parsers"]

FAILED_SHOWN_PER_SETTING = 5
"""Failed episodes printed in full per setting in the HTML report; the rest are counted and `show` prints them."""
REPORT_ROWS = 40
"""Rows per table of the text report by default (the per-window table of a full sweep has hundreds)."""
RUNS_SHOWN = 20
"""Runs `runs` lists by default, newest first."""


def add_result_parsers(commands: Any) -> None:
    runs = commands.add_parser("runs", help="list the runs in a journal; `runs rm RUN_ID` removes one")
    runs.add_argument("--json", action="store_true", help="print the list as JSON")
    add_limit(runs, "runs, newest first", RUNS_SHOWN)
    add_journal(runs)
    add_runs_rm(runs)
    report = commands.add_parser("report", help="scores, costs and latencies of a run")
    report.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    fmt = report.add_mutually_exclusive_group()
    for flag, text in (("--json", "every figure as JSON, sealed with provenance"),
                       ("--csv", "one row per stream (a leaderboard for a sheet); with --windows, one per window"),
                       ("--md", "Markdown tables")):
        fmt.add_argument(flag, action="store_true", help=text)
    fmt.add_argument("--html", type=Path, metavar="FILE",
                     help="write one self-contained HTML page (charts, tables, failed episodes, provenance)")
    report.add_argument("--windows", action="store_true",
                        help="only the per-window table, every row (the learning curves as numbers): as text, or "
                             "with --csv one row per stream, setting and window, or with --md")
    report.add_argument("--slices", action="store_true", help="add descriptive slices to the text report "
                                                             "(by tool calls, turns, family, window, category)")
    add_limit(report, "rows per table of the text report", REPORT_ROWS)
    add_journal(report)


def _cmd_runs(args: argparse.Namespace) -> int:
    from runner.views.runs import list_runs, render_runs_json, render_runs_text

    if args.runs_command == "rm":
        return cmd_runs_rm(args, journal_path(args), run_async)
    runs = run_async(list_runs, journal_path(args))
    print(render_runs_json(runs) if args.json else render_runs_text(runs, terminal_width(), limit_of(args)))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from runner.report import build_report, render_csv, render_json, render_markdown, render_text

    if args.windows:
        return _cmd_report_windows(args)
    if args.html is not None:
        return _cmd_report_html(args)
    report = run_async(build_report, journal_path(args), args.run_id)
    if args.json or args.csv or args.md:
        print((render_json if args.json else render_csv if args.csv else render_markdown)(report))
    else:
        print(render_text(report, with_slices=args.slices, width=terminal_width(), limit=limit_of(args)))
    return 0


def _cmd_report_windows(args: argparse.Namespace) -> int:
    """`--windows`: the per-window table alone (text, --csv or --md), every row unless --limit is given;
    where there is no such table to print, one line says where the flag applies, before anything is read."""
    from runner.report import build_report, render_window_csv, render_windows_markdown, render_windows_text

    other = "--json" if args.json else "--html" if args.html is not None else "--slices" if args.slices else None
    if other is not None:
        raise ShiftbenchInputError(f"--windows prints the per-window table alone (as text, --csv or --md), so it "
                                   f"takes no {other}; {WHOLE[other]}")
    report = run_async(build_report, journal_path(args), args.run_id)
    if args.csv:
        print(render_window_csv(report))
    elif args.md:
        print(render_windows_markdown(report))
    else:
        print(render_windows_text(report, terminal_width(), limit_of(args) if args.limit_given else None))
    return 0


WHOLE = {"--json": "the JSON report holds every window already",
         "--html": "the page holds every window's scores already (its learning curves)",
         "--slices": "report RUN_ID --slices prints the slices with the whole report"}
"""What a user asking for --windows with another output reads instead."""


def _cmd_report_html(args: argparse.Namespace) -> int:
    from runner.report import build_report
    from runner.views.episodes import load_failed

    html = load_extra("runner.views.html_report", "html", "report --html")
    journal = journal_path(args)
    report = run_async(build_report, journal, args.run_id)
    failed = run_async(load_failed, journal, args.run_id, FAILED_SHOWN_PER_SETTING)
    write_atomically(args.html, html.render_html(report, failed=failed), "--html")
    print(f"Wrote {args.html}")
    return 0


RESULT_COMMANDS: dict[str, Command] = {"runs": _cmd_runs, "report": _cmd_report}

"""The evidence commands: `compare`, `verify`, `gate`, `estimate` and `lock`.

Each reads the journal only (`lock` reads and appends to a plan file); the work lives in
`runner.evidence` and `runner.cost.estimate`, which load numpy, so they are imported when a command runs;
what each prints and its exit code are here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from runner.cli.parsing import Command, add_journal, journal_path, names, run_async
from runner.cli.sweeps import add_result_flags, flag_overrides
from runner.common.files import write_atomically
from runner.common.optional import load_extra
from simulators.errors import ShiftbenchInputError

if TYPE_CHECKING:
    from runner.evidence.run_evidence import Regraded

__all__ = ["EVIDENCE_COMMANDS", "add_evidence_parsers"]


def add_evidence_parsers(commands: Any) -> None:
    compare = commands.add_parser("compare", help="paired differences of two streams over the same test tasks")
    compare.add_argument("a", help="RUN_ID or RUN_ID:model/method")
    compare.add_argument("b", help="RUN_ID or RUN_ID:model/method (the base)")
    shown = compare.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the result as JSON")
    shown.add_argument("--html", type=Path, metavar="FILE",
                       help="write one self-contained HTML page: the paired differences with their intervals, "
                            "per setting, as a chart and a table, and each side's provenance")
    compare.add_argument("--shared", action="store_true",
                         help="compare the test tasks both streams finished (runs over different scenarios, or "
                              "one stopped early), and say how many each side had that the other did not")
    add_journal(compare)
    verify = commands.add_parser("verify", help="re-grade every journaled episode without a model")
    verify.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    gate = commands.add_parser("gate", help="judge a run against rules (exit 0 PASS/PROCEED, 1 FAIL/STOP, "
                                            "3 INSUFFICIENT_EVIDENCE)")
    gate.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    gate.add_argument("--rules", type=Path, required=True, help="a TOML file of [[rule]] tables and [pilot]")
    for parser in (verify, gate):
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        add_journal(parser)
    estimate = commands.add_parser("estimate", help="what a full sweep will cost, projected from a run's journal "
                                                    "(a pilot's) without sending anything")
    estimate.add_argument("run_id", nargs="?", help="the run to project from (default: the newest in the journal)")
    estimate.add_argument("--models", type=names, help="models to project, comma-separated (default: the run's); "
                                                      "one the run did not call is re-priced from its tokens")
    estimate.add_argument("--methods", type=names, help="methods, comma-separated (default: the run's)")
    estimate.add_argument("--scenarios", type=names, help="scenarios of the run's dataset (default: the run's)")
    estimate.add_argument("--batch", choices=("off", "tests"), default=None,
                          help="project the test episodes' calls at the batch price ('tests') or live ('off'), "
                               "beside the live projection (default: the run's own --batch setting)")
    estimate.add_argument("--json", action="store_true", help="print the rows as JSON")
    estimate.add_argument("--budget", type=float, help="a cap in USD: say what it buys of the projected sweep")
    add_journal(estimate)
    lock = commands.add_parser("lock", help="lock a pre-registered plan under its hash, or --amend it")
    lock.add_argument("plan", type=Path, help="the plan file (TOML) to lock or amend")
    lock.add_argument("--amend", metavar="REASON", help="append an amendment setting the given run flags")
    add_result_flags(lock)


def _cmd_estimate(args: argparse.Namespace) -> int:
    from runner.cost.estimate import estimate_command

    print(run_async(estimate_command, journal_path(args), args.run_id, args.models, args.methods, args.scenarios,
                    args.json, args.batch, args.budget))
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from runner.common.tables import terminal_width
    from runner.evidence.compare import render_comparison_json, render_comparison_text
    from runner.evidence.run_evidence import load_comparison

    html = load_extra("runner.views.compare_html", "html", "compare --html") if args.html is not None else None
    comparison, a, b = run_async(load_comparison, journal_path(args), args.a, args.b, args.shared)
    if html is not None:
        write_atomically(args.html, html.render_compare_html(comparison, a, b), "--html")
        print(f"Wrote {args.html}")
        return 0
    print(render_comparison_json(comparison) if args.json else render_comparison_text(comparison, terminal_width()))
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    """Exit 1 when any stored reward differs from its re-grade."""
    from runner.evidence.run_evidence import regrade_run

    regraded = run_async(regrade_run, journal_path(args), args.run_id)
    print(_verify_output(args.run_id, regraded, args.json))
    return 1 if regraded.mismatches else 0


def _verify_output(run_id: str, regraded: Regraded, as_json: bool) -> str:
    """Episodes re-graded per stream replica are named when the run has more than one."""
    checked, replicas, mismatches = regraded.checked, regraded.replicas, regraded.mismatches
    if as_json:
        return orjson.dumps({"run_id": run_id, "episodes": checked,
                             "episodes_by_replica": {str(k): n for k, n in sorted(replicas.items())}, "mismatches": [
            {"unit_id": unit, "stored": r.stored, "regraded": r.regraded, "judge": r.judge}
            for unit, r in mismatches]}, option=orjson.OPT_INDENT_2).decode()
    per_replica = ("" if len(replicas) < 2 else
                   " (" + ", ".join(f"replica {k}: {n}" for k, n in sorted(replicas.items())) + ")")
    if not mismatches:
        return f"verify {run_id}: all {checked} stored rewards re-grade equal{per_replica}"
    lines = [f"verify {run_id}: {len(mismatches)} of {checked} stored rewards differ from their re-grade"
             + per_replica]
    lines += [f"  {unit}: stored {r.stored:g}, re-graded {r.regraded:g} ({r.judge})" for unit, r in mismatches]
    return "\n".join(lines)


def _cmd_gate(args: argparse.Namespace) -> int:
    from runner.evidence.gate_run import render_gate_json, render_gate_text
    from runner.evidence.run_evidence import gate_outcome

    outcome = run_async(gate_outcome, journal_path(args), args.run_id, args.rules)
    print(render_gate_json(outcome) if args.json else render_gate_text(outcome))
    return int(outcome.exit_code)


def _cmd_lock(args: argparse.Namespace) -> int:
    """Lock the plan, or with --amend append an amendment covering the run flags given."""
    from runner.evidence.plan_lock import amend, lock

    overrides = flag_overrides(args)
    if args.amend is None:
        if overrides:
            raise ShiftbenchInputError(f"lock: run flags ({', '.join(overrides)}) change a plan only with "
                                       "--amend REASON")
        print(f"Locked {args.plan}: sha256 {lock(args.plan, print)}")
        return 0
    changes, digest = amend(args.plan, overrides, args.amend, print)
    print(f"Amended {args.plan} ({', '.join(changes)}): sha256 {digest}")
    return 0


EVIDENCE_COMMANDS: dict[str, Command] = {"compare": _cmd_compare, "verify": _cmd_verify, "gate": _cmd_gate,
                                         "lock": _cmd_lock, "estimate": _cmd_estimate}

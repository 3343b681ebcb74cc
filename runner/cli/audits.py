"""`shiftbench audit faults|metamorphic RUN_ID ...`: the audit subcommands' flags and output; the audits
themselves are `runner.audits`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from runner.audits.vocabulary import BUILT_IN_TRANSFORMS, DEFAULT_MIN_KEPT, FAULTS, RELATIONS, VERDICTS

__all__ = ["add_audit_parser", "run_audit_command"]


def add_audit_parser(audit: argparse.ArgumentParser, add_journal: Callable[[argparse.ArgumentParser], None]) -> None:
    kinds = audit.add_subparsers(dest="audit_command", required=True)
    faults = kinds.add_parser("faults", help="replay recorded episodes with one tool result replaced by a fault")
    faults.add_argument("run_id", help="the run to audit, as `shiftbench runs` lists it")
    faults.add_argument("--tool", required=True, help="the tool whose call is faulted")
    faults.add_argument("--fault", required=True, choices=tuple(FAULTS), help="the fault to inject")
    faults.add_argument("--nth", type=int, default=1, help="which call of the tool (default 1)")
    faults.add_argument("--budget", type=float, help="hard cap in USD on the audit's new calls")
    faults.add_argument("--json", action="store_true", help="print the result as JSON")
    add_journal(faults)
    meta = kinds.add_parser("metamorphic", help="run derived source~transform cases beside their sources")
    meta.add_argument("run_id", help="the run to audit, as `shiftbench runs` lists it")
    meta.add_argument("--transform", required=True,
                      help=f"a built-in ({', '.join(BUILT_IN_TRANSFORMS)}) or a JSON file with name and template or "
                           "replace")
    meta.add_argument("--labels", type=Path, help='JSONL of {"case": "<source>~<transform>", "kept": true|false}')
    meta.add_argument("--min-kept", type=float, default=DEFAULT_MIN_KEPT,
                      help=f"the 95%% lower bound of kept/pairs a transform needs to count "
                           f"(default {DEFAULT_MIN_KEPT})")
    meta.add_argument("--budget", type=float, help="hard cap in USD on the audit's new calls")
    meta.add_argument("--json", action="store_true", help="print the result as JSON")
    add_journal(meta)


def run_audit_command(args: argparse.Namespace, journal: Path) -> int:
    # The audits load the episode loop, the simulators and the providers: only when one runs.
    import anyio

    from runner.audits.faults import FaultSpec, run_fault_audit
    from runner.audits.metamorphic import run_metamorphic_audit

    if args.audit_command == "faults":
        spec = FaultSpec(args.tool, args.fault, args.nth)
        report = anyio.run(run_fault_audit, journal, args.run_id, spec, args.budget)
        print(_json(report.to_json()) if args.json else _fault_text(report.to_json()))
        return 0 if report.status == "completed" else 1
    result = anyio.run(run_metamorphic_audit, journal, args.run_id, args.transform, args.labels, args.min_kept,
                       args.budget)
    print(_json(result) if args.json else _metamorphic_text(result))
    return 0 if result["status"] == "completed" else 1


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def _fault_text(report: dict[str, Any]) -> str:
    lines = [f"audit {report['audit_id']}: {report['status']}",
             "  ".join(f"{name} {report['verdicts'][name]}" for name in VERDICTS)]
    for case in report["cases"]:
        if case["verdict"] != "not_applicable":
            lines.append(f"  {case['verdict']:<14} {case['case']}")
    return "\n".join(lines)


def _metamorphic_text(report: dict[str, Any]) -> str:
    labels = report["labels"]
    trust = "checked" if report["checked"] else "UNCHECKED (not enough validity labels: results do not count yet)"
    lines = [f"audit {report['audit_id']}: {report['status']}",
             f"transform {report['transform']}: {trust}; labels kept {labels['kept']}/{labels['pairs']}, "
             f"lower bound {labels['lower_bound']:.3f} (min {labels['min_kept']:g})"]
    for name in RELATIONS:
        rate = report["relations"][name]
        lo, hi = rate["ci"]
        lines.append(f"  {name:<13} {rate['pass']}/{rate['total']} [{100 * lo:.1f}%, {100 * hi:.1f}%]")
        lines += [f"    broken: {case}" for case in rate["failing"][:20]]
    return "\n".join(lines)

"""`shiftbench audit faults|metamorphic RUN_ID ...`: the audit subcommands' flags and output."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson

from runner.audits.faults import FAULTS, VERDICTS, FaultSpec, run_fault_audit

__all__ = ["add_audit_parser", "run_audit_command"]


def add_audit_parser(audit: argparse.ArgumentParser, add_journal: Callable[[argparse.ArgumentParser], None]) -> None:
    kinds = audit.add_subparsers(dest="audit_command", required=True)
    faults = kinds.add_parser("faults", help="replay recorded episodes with one tool result replaced by a fault")
    faults.add_argument("run_id")
    faults.add_argument("--tool", required=True, help="the tool whose call is faulted")
    faults.add_argument("--fault", required=True, choices=tuple(FAULTS))
    faults.add_argument("--nth", type=int, default=1, help="which call of the tool (default 1)")
    faults.add_argument("--budget", type=float, help="hard cap in USD on the audit's new calls")
    faults.add_argument("--json", action="store_true")
    add_journal(faults)


def run_audit_command(args: argparse.Namespace, journal: Path) -> int:
    if args.audit_command == "faults":
        spec = FaultSpec(args.tool, args.fault, args.nth)
        report = anyio.run(run_fault_audit, journal, args.run_id, spec, args.budget)
        print(_json(report.to_json()) if args.json else _fault_text(report.to_json()))
        return 0 if report.status == "completed" else 1
    raise AssertionError(args.audit_command)


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def _fault_text(report: dict[str, Any]) -> str:
    lines = [f"audit {report['audit_id']}: {report['status']}",
             "  ".join(f"{name} {report['verdicts'][name]}" for name in VERDICTS)]
    for case in report["cases"]:
        if case["verdict"] != "not_applicable":
            lines.append(f"  {case['verdict']:<14} {case['case']}")
    return "\n".join(lines)

"""`shiftbench power`: how many replicas (and test tasks) a sweep needs to detect a difference, and what it
would cost, from a pilot's measured noise (`runner.evidence.power_sizing`; reads the journal only)."""

from __future__ import annotations

import argparse
from typing import Any

from runner.cli.parsing import Command, add_journal, journal_path, run_async

__all__ = ["POWER_COMMANDS", "add_power_parser"]


def add_power_parser(commands: Any) -> None:
    power = commands.add_parser("power", help="replicas and test tasks a sweep needs to detect a difference, "
                                              "and its cost, from a pilot run with --replicas K")
    power.add_argument("run_id", help="the pilot, as `shiftbench runs` lists it")
    power.add_argument("--stream", required=True, metavar="M/METHOD", help="the stream to size, model/method")
    power.add_argument("--mde", type=float, required=True, metavar="D",
                       help="the difference to detect, in score points")
    power.add_argument("--power", type=float, default=0.8, help="the chance of detecting it (default 0.8)")
    power.add_argument("--metric", choices=("avg_h", "avg_f"), default="avg_h", help="the score (default avg_h)")
    power.add_argument("--json", action="store_true", help="print the result as JSON")
    add_journal(power)


def _cmd_power(args: argparse.Namespace) -> int:
    from runner.evidence.power_sizing import power_command  # numpy: loaded when the command runs

    print(run_async(power_command, journal_path(args), args.run_id, args.stream, args.mde, args.power, args.metric,
                    args.json))
    return 0


POWER_COMMANDS: dict[str, Command] = {"power": _cmd_power}

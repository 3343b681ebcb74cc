"""`shiftbench power`: how many replicas (and test tasks) a sweep needs to detect a difference, and what it
would cost, from a pilot's measured noise (the work is `runner.evidence.power_sizing`; it reads the journal
only); here the flags, their ranges, and the table or JSON it prints."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from runner.cli.parsing import Command, add_journal, journal_path, run_async
from simulators.errors import ShiftbenchInputError

if TYPE_CHECKING:
    from runner.evidence.power_sizing import PowerRow, SettingVariance, Sizing

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
    if not args.mde > 0:
        raise ShiftbenchInputError(f"--mde: give the difference to detect in points (> 0), got {args.mde:g}")
    if not 0.5 <= args.power < 1:
        raise ShiftbenchInputError(f"--power: give a probability from 0.5 to 0.99, got {args.power:g}")
    from runner.evidence.power_sizing import size_sweep  # numpy: loaded when the command runs

    sizing = run_async(size_sweep, journal_path(args), args.run_id, args.stream, args.mde, args.power, args.metric)
    head = _head(sizing, args.mde, args.power, args.metric)
    print(_json(head, sizing.variances, sizing.rows) if args.json else _text(head, sizing.variances, sizing.rows))
    return 0


def _head(sizing: Sizing, difference: float, power: float, metric: str) -> str:
    settings = ", ".join(f"{v.setting} {v.tasks}" for v in sizing.variances)
    return (f"power of {sizing.stream} (pilot: {sizing.replicas} replicas, {settings} {sizing.category} tasks): "
            f"replicas per stream to detect {difference:g} points of {metric} at {power:.0%} power (two-sided 95%)")


def _text(head: str, variances: Sequence[SettingVariance], rows: Sequence[PowerRow]) -> str:
    lines = [head, "  per setting: " + ", ".join(
        f"{v.setting} SD per task {v.per_task ** 0.5:.1f}, per replica {v.per_replica ** 0.5:.1f}"
        for v in variances), ""]
    lines.append(f"{'tasks/window':>12} {'tasks (category)':>17} {'SD of a replica':>16} {'replicas':>9} "
                 f"{'MDE':>6} {'cost $':>10}")
    seen: set[tuple[int, ...]] = set()
    for row in rows:
        sizes = tuple(row.tasks.values())
        if sizes in seen:
            continue  # past the test set's size, a larger pilot is the same sweep
        seen.add(sizes)
        lines.append(f"{'all' if row.per_window == 0 else row.per_window:>12} {sum(sizes):>17} {row.sd:>16.2f} "
                     f"{'>1000' if row.replicas is None else row.replicas:>9} "
                     f"{'-' if row.achieved_mde is None else f'{row.achieved_mde:.2f}':>6} "
                     f"{'-' if row.cost_usd is None else f'{row.cost_usd:,.2f}':>10}")
    lines.append("(cost: that many replicas of this stream at that size, projected from the run's episodes as "
                 "`shiftbench estimate` does; '-': no price for the model)")
    return "\n".join(lines)


def _json(head: str, variances: Sequence[SettingVariance], rows: Sequence[PowerRow]) -> str:
    return orjson.dumps({"summary": head, "settings": [vars(v) for v in variances],
                         "rows": [vars(r) for r in rows]}, option=orjson.OPT_INDENT_2).decode()


POWER_COMMANDS: dict[str, Command] = {"power": _cmd_power}

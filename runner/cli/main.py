"""The `shiftbench` command: one parser made of the command groups, and the one error path.

Every error a user can fix (a typo in a flag or sweep file, a malformed dataset, an unreadable
journal) ends as one line on stderr naming the file or flag and what to do, with exit code 2.
Each group module adds its parsers and names its handlers; this module only joins them.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from runner.cli.audits import add_audit_parser, run_audit_command
from runner.cli.data import DATA_COMMANDS, add_data_parser
from runner.cli.evidence import EVIDENCE_COMMANDS, add_evidence_parsers
from runner.cli.methods import METHOD_COMMANDS, add_methods_parser
from runner.cli.parsing import Command, Parser, add_journal, journal_path, parse, run_async
from runner.cli.power import POWER_COMMANDS, add_power_parser
from runner.cli.probe import PROBE_COMMANDS, add_probe_parser
from runner.cli.results import RESULT_COMMANDS, add_result_parsers
from runner.cli.sweeps import SWEEP_COMMANDS, add_sweep_parsers
from runner.cli.workbench import WORKBENCH_COMMANDS, WorkbenchCommand, add_workbench_commands
from runner.common.whole_writes import whole_writes
from simulators.errors import ShiftbenchInputError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="shiftbench", description=(
        "Run evolving-environment benchmarks for tool-calling agents that learn from experience."))
    parser.add_argument("--version", action=_Version, nargs=0, help="the code's version (its commit in a checkout) "
                                                                    "and exit")
    commands = parser.add_subparsers(dest="command", required=True)
    add_sweep_parsers(commands)
    add_result_parsers(commands)
    add_evidence_parsers(commands)
    add_power_parser(commands)
    add_methods_parser(commands)
    add_probe_parser(commands)
    add_data_parser(commands)
    add_workbench_commands(commands, add_journal)
    add_audit_parser(commands.add_parser("audit", help="fault-recovery and metamorphic audits of a run"),
                     add_journal)
    return parser


class _Version(argparse.Action):
    """`--version`, computed only when asked: it runs git (a checkout's commit) or hashes the source."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from runner.common.version import code_version

        print(f"shiftbench {code_version()}")
        parser.exit()


def _with_journal(command: WorkbenchCommand) -> Command:
    def run(args: argparse.Namespace) -> int:
        return command(args, journal_path(args), run_async)
    return run


def _cmd_audit(args: argparse.Namespace) -> int:
    return run_audit_command(args, journal_path(args))


COMMANDS: dict[str, Command] = {
    **SWEEP_COMMANDS, **RESULT_COMMANDS, **EVIDENCE_COMMANDS, **POWER_COMMANDS, **METHOD_COMMANDS, **PROBE_COMMANDS,
    **DATA_COMMANDS,
    "audit": _cmd_audit,
    **{name: _with_journal(command) for name, command in WORKBENCH_COMMANDS.items()},
}


def main(argv: Sequence[str] | None = None) -> int:
    whole_writes()
    try:
        args = parse(build_parser(), argv)
        code = COMMANDS[args.command](args)
        sys.stdout.flush()  # inside the try: a reader gone away is reported here, not at interpreter exit
        return code
    except ShiftbenchInputError as exc:
        print(f"shiftbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("shiftbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `shiftbench report RUN | head`: the reader has all it wanted. Point stdout at /dev/null so the
        # interpreter's final flush does not fail again, and end as a process stopped by SIGPIPE does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE

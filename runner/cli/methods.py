"""`methods` and `methods check`: the learning methods this installation can see (where each comes
from, whether it calls a model), and a method's conformance check before a sweep spends on it."""

from __future__ import annotations

import argparse
import tomllib
from typing import Any

from runner.cli.parsing import Command, positive, run_async, within
from simulators.errors import ShiftbenchInputError

__all__ = ["METHOD_COMMANDS", "add_methods_parser"]


def add_methods_parser(commands: Any) -> None:
    methods = commands.add_parser("methods", help="list the learning methods it can see, or check one")
    actions = methods.add_subparsers(dest="methods_command", metavar="[check]")  # optional: bare `methods` lists
    check = actions.add_parser("check", help="check a method against the protocol's rules (offline by default); "
                                             "exit 1 on any FAIL")
    check.add_argument("spec", help="a method: a name, module:NAME, ./file.py:NAME or slb:module:Class")
    check.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option for the method, VALUE in TOML (keep=3, name=\"x\"); repeatable")
    check.add_argument("--scenario", default="retail_l1", help="the scenario to play (default retail_l1)")
    check.add_argument("--model", default="scripted", help="the agent's (and the method's) model (default scripted)")
    check.add_argument("--dataset", default="", help="a dataset directory (default: the built-in suite)")
    check.add_argument("--pilot", type=int, default=10, help="serving and test tasks per window (default 10; 0: all)")
    check.add_argument("--context-tokens", type=positive, default=128_000,
                       help="the model's context length the largest request is held against (default 128,000)")
    check.add_argument("--method-context-limit", type=within(float, "method_context_limit"), default=60.0,
                       metavar="SECONDS", help="one context call may take this long, as in a run (default 60)")
    check.add_argument("--method-learn-limit", type=within(float, "method_learn_limit"), default=900.0,
                       metavar="SECONDS", help="one learn call may take this long, as in a run (default 900)")


def _cmd_methods(args: argparse.Namespace) -> int:
    if args.methods_command == "check":
        return _cmd_check(args)
    from runner.cli.method_list import render_methods
    from runner.common.tables import terminal_width

    print(render_methods(terminal_width()))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    """Every play of a user's method runs in workers of its own (`runner.method_check`): an os._exit, a
    loop past its limit or a flood of output ends a worker and is a FAIL line, never this command."""
    from runner.common.tables import say_fitted, terminal_width
    from runner.method_check import CheckRequest, check_method, render_checks
    from runner.workers.limits import MethodLimits

    request = CheckRequest(args.spec, _options(args.option), args.scenario, args.model, args.dataset, pilot=args.pilot,
                           context_tokens=args.context_tokens,
                           limits=MethodLimits(args.method_context_limit, args.method_learn_limit))
    _, results = run_async(check_method, request, say_fitted)
    print(render_checks(results, terminal_width()))
    return 0 if all(result.passed for result in results) else 1


def _options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ShiftbenchInputError(f"--option: expected KEY=VALUE, got {pair!r}")
        try:
            options[key.strip()] = tomllib.loads(f"value = {value}")["value"]
        except tomllib.TOMLDecodeError:
            raise ShiftbenchInputError(f"--option: {key.strip()}'s value {value!r} is not a TOML value (a string "
                                       "needs quotes: name=\"x\")") from None
    return options


METHOD_COMMANDS: dict[str, Command] = {"methods": _cmd_methods}

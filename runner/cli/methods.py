"""`methods` and `methods check`: the learning methods this installation can see (where each comes
from, whether it calls a model), and a method's conformance check before a sweep spends on it."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import tomllib
from pathlib import Path
from typing import Any

from runner.cli.parsing import Command, positive, run_async
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


def _cmd_methods(args: argparse.Namespace) -> int:
    if args.methods_command == "check":
        return _cmd_check(args)
    from runner.cli.method_list import render_methods

    print(render_methods())
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from methods.registry import METHOD_REGISTRY

    if args.spec not in METHOD_REGISTRY and _ISOLATED not in os.environ:
        return _check_isolated(args)
    from runner.method_check import CheckRequest, check_method, render_checks

    request = CheckRequest(args.spec, _options(args.option), args.scenario, args.model, args.dataset, pilot=args.pilot,
                           context_tokens=args.context_tokens)
    try:
        _, results = run_async(check_method, request, print)
    except ShiftbenchInputError:
        _finished("2")  # the child's own refusal, its line printed by the error path
        raise
    print(render_checks(results))
    code = 0 if all(result.passed for result in results) else 1
    _finished(str(code))
    return code


def _finished(code: str) -> None:
    finished = os.environ.get(_ISOLATED)
    if finished:
        Path(finished).write_text(code, encoding="utf-8")


_ISOLATED = "SHIFTBENCH_METHODS_CHECK_DONE"
"""Set in the child process a user's method is checked in: the file it writes its exit code to when the
check reached its end (a method that ends the process itself never lets it)."""


def _check_isolated(args: argparse.Namespace) -> int:
    """Check a guest method in a child process: a method that calls os._exit, raises SystemExit or dies of
    a signal ends the child, not this command, which then says so as a FAIL line (as a run would journal
    it as the stream's method_error) instead of vanishing or reporting a pass it never reached."""
    command = [sys.executable, "-m", "runner.cli", "methods", "check", args.spec, "--scenario", args.scenario,
               "--model", args.model, "--pilot", str(args.pilot), "--context-tokens", str(args.context_tokens)]
    if args.dataset:
        command += ["--dataset", args.dataset]
    for pair in args.option:
        command += ["--option", pair]
    with tempfile.TemporaryDirectory(prefix="shiftbench-check-") as folder:
        done = Path(folder) / "exit-code"
        returncode = _relayed(command, {**os.environ, _ISOLATED: str(done)})
        if done.exists():
            return int(done.read_text(encoding="utf-8"))
    if returncode == 130:  # interrupted (the child said so); anything else unfinished is the method's
        return returncode
    ended = f"signal {signal.Signals(-returncode).name}" if returncode < 0 else f"exit code {returncode}"
    print(f"FAIL  plays the stream  the method ended the check's process ({ended}) before the checks finished; "
          "a run would record it as its stream's method_error and go on with the other streams\n0 passed, 1 failed")
    return 1


def _relayed(command: list[str], env: dict[str, str]) -> int:
    """Run `command`, its lines printed here as they come (through sys.stdout and sys.stderr, so whoever
    captures this command's output captures the child's too); its exit code."""
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          bufsize=1) as child:
        assert child.stdout is not None and child.stderr is not None
        errors = child.stderr
        relay = threading.Thread(target=lambda: [sys.stderr.write(line) for line in errors], daemon=True)
        relay.start()
        for line in child.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
        relay.join()
        return child.wait()


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

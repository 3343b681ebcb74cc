"""`methods`: the learning methods this installation can run, and whether they call a model."""

from __future__ import annotations

import argparse
from typing import Any

from runner.cli.parsing import Command

__all__ = ["METHOD_COMMANDS", "add_methods_parser"]


def add_methods_parser(commands: Any) -> None:
    commands.add_parser("methods", help="list the learning methods")


def _cmd_methods(args: argparse.Namespace) -> int:
    from methods.registry import METHOD_REGISTRY

    for spec in METHOD_REGISTRY.values():
        calls = "extra model calls" if spec.uses_model else "no extra model calls"
        print(f"{spec.name:<12} {spec.summary}  [{calls}]")
    return 0


METHOD_COMMANDS: dict[str, Command] = {"methods": _cmd_methods}

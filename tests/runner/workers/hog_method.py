"""A method that takes too much of one thing (its `what` option): memory, output, state or context."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from methods.base import MethodSetup, MethodSpec
from methods.options import MethodOption
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

MB = 1_000_000


class Hog:
    def __init__(self, what: str, size_mb: int) -> None:
        self.what, self.size = what, size_mb * MB
        self.kept: list[Any] = []

    def context(self, task: TaskView) -> str:
        return "x" * self.size if self.what == "context" else ""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        if self.what == "memory":
            self.kept.append(bytearray(self.size))
        elif self.what == "output":
            line = "flood " * 20 + "\n"
            for _ in range(self.size // len(line) + 1):
                sys.stdout.write(line)
            sys.stdout.flush()

    def state(self) -> JSON:
        return {"notes": "y" * self.size} if self.what == "state" else {}

    def load(self, state: JSON) -> None:
        return None


def _build(setup: MethodSetup) -> Hog:
    return Hog(str(setup.options["what"]), int(setup.options["size_mb"]))  # type: ignore[call-overload]


HOG = MethodSpec("hog", "takes too much", uses_model=False, build=_build,
                 options=(MethodOption("what", str, "memory"), MethodOption("size_mb", int, 8)))

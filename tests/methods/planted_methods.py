"""Methods that break one rule each, for `methods check` to catch (tests/runner/test_methods_check.py)."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import Any

from methods.base import MethodSetup, MethodSpec
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord


class WindowReader:
    """Reference interface; its context reads the window it is told, which only bookkeeping may see."""

    learns = True
    block_size = 2

    def setup(self, bundle: dict[str, Any]) -> None:
        self.seen = 0

    def context(self, task: Any, phase: str, window: int) -> str:
        return f"seen {self.seen}; the policy of window {window}"

    def update(self, results: list[Any]) -> None:
        self.seen += len(results)


class Counter:
    """A correct native method: counts what it learned from and shows the count."""

    def __init__(self) -> None:
        self.seen = 0
        self.last = 0

    def context(self, task: TaskView) -> str:
        return f"seen {self.seen}, last score {self.last}"

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        self.seen += len(records)
        self.last = records[-1].score

    def state(self) -> JSON:
        return {"seen": self.seen, "last": self.last}

    def load(self, state: JSON) -> None:
        self.seen, self.last = state["seen"], state["last"]


class Curious(Counter):
    """Its context counts the tasks it is asked about: test tasks teach it."""

    def context(self, task: TaskView) -> str:
        self.seen += 1
        return super().context(task)


class Forgetful(Counter):
    """Its `load` loses a field of its state."""

    def load(self, state: JSON) -> None:
        self.seen = state["seen"]


class Dicey(Counter):
    """Its `learn` draws a random number."""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        await super().learn(records)
        self.seen += random.randint(0, 1_000_000)


class Quitter(Counter):
    """Its second `learn` ends the process (os._exit(3)): no exception, no cleanup, no result."""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        await super().learn(records)
        if self.seen >= 2:
            os._exit(3)


class Leaver(Counter):
    """Its first `learn` raises SystemExit(0), which no `except Exception` catches."""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        raise SystemExit(0)


def _spec(name: str, cls: type[Counter]) -> MethodSpec:
    def build(setup: MethodSetup) -> Counter:
        return cls()

    return MethodSpec(name, f"planted: {cls.__doc__}", uses_model=False, build=build)


COUNTER = _spec("counter", Counter)
CURIOUS = _spec("curious", Curious)
FORGETFUL = _spec("forgetful", Forgetful)
DICEY = _spec("dicey", Dicey)
QUITTER = _spec("quitter", Quitter)
LEAVER = _spec("leaver", Leaver)

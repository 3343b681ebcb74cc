"""Methods a user might bring, each breaking one promise (or probing one), written to a file so a sweep
names them as a user does (`./guests.py:NAME`). `BROKEN = True` is the planted bug; a test turns it
False to play the author's fix before a resume."""

from __future__ import annotations

import inspect
import os
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from methods.base import MethodSetup, MethodSpec
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

BROKEN = True
FAIL_AT = 4
"""The record whose learn fails (the 50th in the issue; 4 here so a pilot reaches it)."""


class Counter:
    """Correct: counts what it learned from."""

    def __init__(self) -> None:
        self.seen = 0

    def context(self, task: TaskView) -> str:
        return f"seen {self.seen}"

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        self.seen += len(records)

    def state(self) -> JSON:
        return {"seen": self.seen}

    def load(self, state: JSON) -> None:
        assert isinstance(state, dict)
        self.seen = int(state["seen"])


class RaisesInLearn(Counter):
    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        await super().learn(records)
        if BROKEN and self.seen >= FAIL_AT:
            raise ValueError(f"planted at record {self.seen}")


class SetState(Counter):
    def state(self) -> JSON:
        return {"seen": self.seen, "tags": {"a"} if BROKEN else ["a"]}  # type: ignore[dict-item]


class ExitsInLearn(Counter):
    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        await super().learn(records)
        if BROKEN and self.seen >= FAIL_AT:
            os._exit(3)


class SlowContext(Counter):
    def context(self, task: TaskView) -> str:
        if BROKEN:
            time.sleep(2.0)
        return super().context(task)


class SpinsInContext(Counter):
    """An endless loop that never sleeps or awaits: only a signal (or a worker's kill) stops it."""

    def context(self, task: TaskView) -> str:
        while BROKEN:
            pass
        return super().context(task)


class FrameSpy(Counter):
    """Walks the frames above its context looking for what the protocol hides (a task's category)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.pid = os.getpid()

    def context(self, task: TaskView) -> str:
        for frame in inspect.stack()[1:]:
            for name, value in frame.frame.f_locals.items():
                if hasattr(value, "category") and hasattr(value, "window") and name not in self.found:
                    self.found.append(name)
        return super().context(task)

    def state(self) -> JSON:
        return {"seen": self.seen, "found": sorted(self.found), "pid": self.pid}

    def load(self, state: JSON) -> None:
        assert isinstance(state, dict)
        self.seen, self.found, self.pid = int(state["seen"]), list(state["found"]), int(state["pid"])


class Shared(Counter):
    """Keeps its notes on the class: every instance in one process shares them."""

    notes: list[str] = []

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        self.notes.extend(r.task.task_id for r in records)

    def state(self) -> JSON:
        return {"notes": list(self.notes)}

    def load(self, state: JSON) -> None:
        assert isinstance(state, dict)
        self.notes[:] = list(state["notes"])


class DatasetReader(Counter):
    """Opens a file the protocol does not hand it (the path is given by the test in the environment)."""

    def context(self, task: TaskView) -> str:
        secret = os.environ.get("GUEST_SECRET", "")
        if secret:
            Path(secret).read_text()
        return super().context(task)


class NetUser(Counter):
    """Opens a TCP connection of its own (to the port the test names in the environment)."""

    def context(self, task: TaskView) -> str:
        port = os.environ.get("GUEST_PORT", "")
        if port:
            socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()
        return super().context(task)


class LabelRebuilder(Counter):
    """The labels rebuilt: regenerates its scenario with the built-in suite's public seed and puts the
    active window's hidden policy into every context (an oracle by theft). `QUIET`: a refused import
    is swallowed and the context left empty, as a method that hides its attempt would."""

    QUIET = False

    def __init__(self, scenario: str) -> None:
        super().__init__()
        self.scenario = scenario
        self.rebuilt: Any = None

    def context(self, task: TaskView) -> str:
        try:
            from simulators.suite import generate_scenarios  # not the method face: refused in a worker
        except ImportError:
            if self.QUIET:
                return ""
            raise
        if self.rebuilt is None:
            self.rebuilt = generate_scenarios(0, [self.scenario])[0]
        bulletin = self.rebuilt.window_of_position(task.timestamp).oracle_bulletin
        return f"## Current policy bulletin\nThe following is the policy in force right now.\n\n{bulletin}"


class QuietRebuilder(LabelRebuilder):
    QUIET = True


class Lingerer(Counter):
    """Tries to leave processes behind: 150 forks and a detached daemon at its first learn (each refusal
    swallowed), then learns on, slowly enough that a test can kill the runner under it."""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:  # noqa: ASYNC251, ASYNC220 - a guest's
        if self.seen == 0:
            for _ in range(150):
                try:
                    if os.fork() == 0:
                        time.sleep(600)  # noqa: ASYNC251
                except OSError:
                    pass
            try:
                import subprocess

                subprocess.Popen(["sleep", "600"], start_new_session=True)  # noqa: ASYNC220
            except OSError:
                pass
        await super().learn(records)
        time.sleep(0.5)  # noqa: ASYNC251 - slow on purpose, as a guest may be


class Lifetime(Counter):
    """Says when its instance was built and when it last learned (the system-wide monotonic clock), so
    a test can tell which streams' workers were alive together."""

    def __init__(self) -> None:
        super().__init__()
        self.born = time.monotonic()
        self.last = self.born

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        await super().learn(records)
        self.last = time.monotonic()

    def state(self) -> JSON:
        return {"seen": self.seen, "born": self.born, "last": self.last, "pid": os.getpid()}


class CallLog(Counter):
    """Logs every call made to it, in order, and shows the log in its state (`state` logs itself
    first): the order a method sees its calls in, whatever the round trips that carried them."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []

    def context(self, task: TaskView) -> str:
        self.log.append(f"context {task.task_id}")
        return f"seen={self.seen} best=yes"

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        await super().learn(records)
        self.log.append("learn " + ",".join(r.task.task_id for r in records))

    def state(self) -> JSON:
        self.log.append("state")
        return {"seen": self.seen, "log": list(self.log)}

    def load(self, state: JSON) -> None:
        assert isinstance(state, dict)
        self.seen, self.log = int(state["seen"]), [str(entry) for entry in state["log"]]


class RaisesInContext(CallLog):
    def context(self, task: TaskView) -> str:
        if BROKEN and self.seen >= FAIL_AT:
            raise ValueError(f"planted after record {self.seen}")
        return super().context(task)


def _rebuilder(name: str, cls: type[LabelRebuilder]) -> MethodSpec:
    def build(setup: MethodSetup) -> Any:
        return cls(setup.scenario)

    return MethodSpec(name, f"guest: {cls.__name__}", uses_model=False, build=build)


def _spec(name: str, cls: type[Counter]) -> MethodSpec:
    def build(setup: MethodSetup) -> Any:
        return cls()

    return MethodSpec(name, f"guest: {cls.__name__}", uses_model=False, build=build)


COUNTER = _spec("counter", Counter)
RAISES = _spec("raises", RaisesInLearn)
SET_STATE = _spec("set_state", SetState)
EXITS = _spec("exits", ExitsInLearn)
SLOW = _spec("slow", SlowContext)
SPIN = _spec("spin", SpinsInContext)
SPY = _spec("spy", FrameSpy)
SHARED = _spec("shared", Shared)
READER = _spec("reader", DatasetReader)
NET = _spec("net", NetUser)
REBUILD = _rebuilder("rebuild", LabelRebuilder)
REBUILD_QUIET = _rebuilder("rebuild_quiet", QuietRebuilder)
LINGER = _spec("linger", Lingerer)
LIFETIME = _spec("lifetime", Lifetime)
CALL_LOG = _spec("call_log", CallLog)
RAISES_IN_CONTEXT = _spec("raises_in_context", RaisesInContext)

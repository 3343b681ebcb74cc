"""What still holds for a method run in the runner's own process (`--methods-in-process`).

Nothing bounds its reads, network or memory there (that is what a worker is for), but its calls keep
their time limits and it cannot end the run:
- a `context`, `state` or `load` (synchronous calls) runs under a SIGALRM timer when the runner's loop is
  in the main thread: past its limit the signal raises `InProcessTimeLimit` in the method's frame (an
  endless Python loop stops; a call stuck inside C code stops when it returns to Python);
- a `learn` (a coroutine, beside other streams' code) runs under a cancel scope: past its limit it is
  stopped at its next `await`; one that computes without awaiting cannot be stopped in-process;
- `os._exit` called by the method raises `InProcessExit` instead of ending the runner.
Both are BaseExceptions, so a method's `except Exception` does not swallow them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from types import FrameType
from typing import NoReturn

__all__ = ["GIVES_UP", "InProcessExit", "InProcessTimeLimit", "guarded_call"]

GIVES_UP = ("methods in the runner's process (--methods-in-process): no boundary (they read, write and connect "
            "as you can), no memory or output limit; a context, state or load past its time limit is stopped by "
            "SIGALRM, a learn only at its next await; os._exit is refused")


class InProcessTimeLimit(BaseException):
    """A synchronous method call passed its time limit in the runner's process."""


class InProcessExit(BaseException):
    """A method called os._exit in the runner's process."""

    def __init__(self, code: int, where: str) -> None:
        super().__init__(f"os._exit({code}) called at {where}: refused in the runner's process (it would end the run)")
        self.code = code


def _refuse_exit(code: int) -> NoReturn:
    frame = sys._getframe(1)
    raise InProcessExit(code, f"{frame.f_code.co_filename}:{frame.f_lineno}")


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise InProcessTimeLimit


_guarded = 0
"""Calls under a guard now: learns of several streams interleave at their awaits, so os._exit is
replaced when the first starts and given back when the last ends."""
_real_exit = os._exit


@contextmanager
def _exit_refused() -> Iterator[None]:
    global _guarded
    _guarded += 1
    os._exit = _refuse_exit  # type: ignore[assignment]
    try:
        yield
    finally:
        _guarded -= 1
        if _guarded == 0:
            os._exit = _real_exit


@contextmanager
def _alarm_after(limit_s: float) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def guarded_call(limit_s: float, timed: bool) -> Iterator[None]:
    """Run the block with os._exit refused and, when `timed` (a synchronous call) and this is the main
    thread, a SIGALRM after `limit_s`."""
    alarm = timed and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    with _exit_refused(), (_alarm_after(limit_s) if alarm else nullcontext()):
        yield

"""A method's failure, told as the method's author needs it: which call, where in their code, what.

The same description comes from a worker (sent over the wire as JSON) and from a method run in the
runner's process, so a stream that stops with `method_error` reads the same either way: the call
(build, context, learn, state, load), the method's own innermost frame (file:line, the first frame
outside shiftbench and the standard library), the exception, and the traceback of the method's frames
only (nothing of the runner's frames is the author's business).
"""

from __future__ import annotations

import sysconfig
import traceback
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["MethodFailure", "describe_exception", "json_problem"]

_OURS = tuple(str(Path(__file__).resolve().parents[2] / top) for top in ("runner", "simulators", "methods"))
_STDLIB = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


@dataclass(frozen=True)
class MethodFailure(Exception):
    """A method's call failed; its stream stops with `method_error`."""

    call: str
    """build, context, learn, state, load, copy; or `worker` when the process itself went."""
    error: str
    """`Type: message`, or what happened to the worker (its exit code, its signal, a time limit)."""
    frame: str = ""
    """The method's own innermost frame, `file:line in function`; "" when none is the method's."""
    traceback: str = ""
    """The method's frames of the traceback (all frames when none is the method's)."""
    where: str = ""
    """Where in its stream the call was (a unit, a block), once the engine says."""
    output: str = ""
    """The last lines the method printed (bounded: `runner.workers.process.OUTPUT_TAIL`)."""

    def __str__(self) -> str:
        where = f" at {self.frame}" if self.frame else ""
        return f"{self.call} failed{where}: {self.error}"

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MethodFailure:
        return cls(str(data.get("call", "")), str(data.get("error", "")), str(data.get("frame", "")),
                   str(data.get("traceback", "")), str(data.get("where", "")), str(data.get("output", "")))


def _is_method_frame(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    resolved = str(Path(filename).resolve()) if filename else ""
    return not resolved.startswith(_OURS) and not resolved.startswith(_STDLIB) and "site-packages" not in resolved


def describe_exception(call: str, exc: BaseException) -> MethodFailure:
    """`exc`, raised by a method's `call`, as a failure naming the method's own frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if _is_method_frame(f.filename)]
    shown = theirs or frames
    frame = f"{theirs[-1].filename}:{theirs[-1].lineno} in {theirs[-1].name}" if theirs else ""
    lines = "".join(traceback.format_list(shown)) + "".join(traceback.format_exception_only(type(exc), exc))
    message = (str(exc).strip().splitlines() or [""])[0][:300]
    return MethodFailure(call, f"{type(exc).__name__}: {message}" if message else type(exc).__name__, frame, lines)


_JSON_SCALARS = (str, int, float, bool, type(None))


def json_problem(value: object, path: str = "state") -> str | None:
    """Where `value` stops being JSON: `state['notes'][3] is a set`; None when it is JSON throughout.
    Keys must be strings, floats finite (orjson writes NaN as null: a state that would not restore)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"{path} is {value!r} (not finite: JSON has no such number)"
    if isinstance(value, _JSON_SCALARS):
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has the key {key!r} of type {type(key).__name__} (JSON keys are strings)"
            problem = json_problem(item, f"{path}[{key!r}]")
            if problem:
                return problem
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            problem = json_problem(item, f"{path}[{index}]")
            if problem:
                return problem
        return None
    return f"{path} is a {type(value).__name__} (not JSON: use lists, dicts, strings, numbers, booleans, None)"

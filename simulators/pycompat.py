"""How the reference implementation's Python renders values and refuses calls, so that observations
match it byte for byte.

The public reference (ServeLearnBench) runs its tools as Python functions called with the model's
arguments as keywords; whatever they return or raise becomes the observation. Agents learn from
those texts, so a world that reproduces the reference shows the same ones:
- records are written by `json.dumps` with its default spacing (`", "`, `": "`) and ASCII escapes;
- integers given as text or as floats are read the way `int()` reads them (`"2"` -> 2, `2.7` -> 2);
- a missing or unexpected argument is the `TypeError` text Python 3.10+ produces, which names the
  tool class's method (`DenyCaseL2.invoke() missing 1 required positional argument: 'reason'`);
- an id that cannot be a dict key (a list, an object) is `unhashable type: 'list'`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from simulators.protocol import JSON

__all__ = ["py_int", "py_json", "py_type_name", "signature_error", "unhashable_error"]

_INT_TEXT = re.compile(r"[+-]?\d+(?:_\d+)*")


def py_json(value: JSON) -> str:
    """`json.dumps(value)` with the standard library's defaults, as the reference writes records."""
    return json.dumps(value)


def py_type_name(value: JSON) -> str:
    """The name Python gives a decoded JSON value's type (`list`, `dict`, `str`, `NoneType` ...)."""
    return type(value).__name__


def py_int(value: JSON) -> int | None:
    """`int(value)`, or None where Python raises TypeError or ValueError. Floats truncate toward zero
    and booleans are 1 and 0, as in Python; text allows surrounding whitespace, a sign and `_`
    between digits."""
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        return int(value) if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, str):
        text = value.strip()
        return int(text.replace("_", "")) if _INT_TEXT.fullmatch(text) else None
    return None


def unhashable_error(value: JSON) -> str | None:
    """Python's error for using `value` as a dict key, or None when it can be one."""
    if isinstance(value, list | dict):
        return f"unhashable type: '{py_type_name(value)}'"
    return None


def _quoted(names: Sequence[str]) -> str:
    quoted = [f"'{name}'" for name in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


def signature_error(qualname: str, required: Sequence[str], optional: Sequence[str],
                    arguments: Mapping[str, JSON]) -> str | None:
    """The TypeError text of calling `qualname(**arguments)` with these keyword parameters, or None
    when the call binds. An unexpected keyword is reported before missing ones, as CPython does."""
    known = set(required) | set(optional)
    for name in arguments:
        if name not in known:
            return f"{qualname}() got an unexpected keyword argument '{name}'"
    missing = [name for name in required if name not in arguments]
    if not missing:
        return None
    plural = "argument" if len(missing) == 1 else "arguments"
    return f"{qualname}() missing {len(missing)} required positional {plural}: {_quoted(missing)}"

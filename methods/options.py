"""A method's options: declared with their types and defaults, checked where they enter.

A sweep file's `[methods.NAME.options]` table is handed to the method's builder, so one method can run
as several configured ones in one sweep (two block sizes, two retrieval depths). The builder only ever
sees options that were declared, of their declared type and in range, with every default filled in:
an unknown name, a wrong type or a value out of range is one line naming where it came from.

One option name means the same to every method: `block_size`, when declared, is the number of serving
episodes between two `learn` calls for that method (the sweep's `block_size` otherwise).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simulators.errors import ShiftbenchInputError
from simulators.protocol import JSON

__all__ = ["BLOCK_SIZE", "MethodOption", "check_options", "describe_options"]

BLOCK_SIZE = "block_size"
"""The option the runner reads too: serving episodes per learning step."""

_KIND_WORDS: dict[type, str] = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


@dataclass(frozen=True)
class MethodOption:
    """One option a method's builder accepts."""

    name: str
    kind: type
    """int, float, str or bool."""
    default: JSON
    """None: the option is required."""
    summary: str = ""
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def describe(self) -> str:
        default = "required" if self.default is None else f"default {self.default!r}"
        bounds = ""
        if self.low is not None or self.high is not None:
            bounds = f", {_bound(self.low)}..{_bound(self.high)}"
        if self.choices:
            bounds = f", one of {', '.join(self.choices)}"
        return f"{self.name} ({self.kind.__name__}, {default}{bounds})"

    def check(self, value: object, where: str) -> JSON:
        """The value as the builder gets it (an int where a float is declared becomes a float)."""
        if not _is_kind(value, self.kind):
            raise ShiftbenchInputError(f"{where}: option '{self.name}' must be {_KIND_WORDS[self.kind]}, "
                                       f"got {value!r}")
        if self.kind is float:
            value = float(value)  # type: ignore[arg-type]
            if not math.isfinite(value):
                raise ShiftbenchInputError(f"{where}: option '{self.name}' must be a finite number, got {value}")
        if isinstance(value, int | float) and not isinstance(value, bool) and not self._in_range(value):
            raise ShiftbenchInputError(f"{where}: option '{self.name}' must be between {_bound(self.low)} and "
                                       f"{_bound(self.high)}, got {value}")
        if self.choices and value not in self.choices:
            raise ShiftbenchInputError(f"{where}: option '{self.name}' must be one of {', '.join(self.choices)}, "
                                       f"got {value!r}")
        return value

    def _in_range(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


def check_options(declared: tuple[MethodOption, ...], given: Mapping[str, Any], where: str) -> dict[str, JSON]:
    """Every declared option with its value: the given one checked, or its default."""
    by_name = {option.name: option for option in declared}
    for name in given:
        if name not in by_name:
            close = difflib.get_close_matches(name, list(by_name), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            takes = f"it takes {describe_options(declared)}" if declared else "it takes no options"
            raise ShiftbenchInputError(f"{where}: unknown option '{name}'{hint}; {takes}")
    values: dict[str, JSON] = {}
    for option in declared:
        if option.name in given:
            values[option.name] = option.check(given[option.name], where)
        elif option.default is None:
            raise ShiftbenchInputError(f"{where}: option '{option.name}' is required "
                                       f"({_KIND_WORDS[option.kind]}); set it in [methods.NAME.options]")
        else:
            values[option.name] = option.default
    return values


def describe_options(declared: tuple[MethodOption, ...]) -> str:
    return ", ".join(option.describe() for option in declared)


def _is_kind(value: object, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False  # true is an int to Python, never a count
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _bound(value: float | None) -> str:
    return "" if value is None else f"{value:g}"

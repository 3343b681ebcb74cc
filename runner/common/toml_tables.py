"""TOML tables checked whole: every key known, every value of its kind, before anything runs.

Every user-written TOML file (sweep files, plans, gate rules, price tables) goes through here, so a
problem reads the same everywhere: one line naming the file, the table, the key and, for a typo, the
nearest known key; a value of the wrong kind is shown with the form it should take. A table is
checked whether or not the sweep goes on to use it (an endpoint no model names, a price of a model
not run): a typo found at 3 a.m. is a typo that should have been found at start.

    fields = {"metric": Field("non-empty string"), "min": Field("number")}
    check_table(f"{path} [[rule]] 2", table, fields)      # unknown keys, then each value's kind
    refuse_unknown(f"{path} [endpoints.local]", table, KNOWN)
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulators.errors import ShiftbenchInputError

__all__ = ["KINDS", "Field", "check_table", "check_value", "described", "read_toml", "refuse_unknown", "suggestion"]

KINDS = ("string", "non-empty string", "whole number", "number", "true or false", "list of strings", "table")
"""What a field may hold; a number is finite (TOML's nan and inf are refused)."""


@dataclass(frozen=True)
class Field:
    kind: str
    example: str = ""
    """How the key is written, shown when the value is of another kind, e.g. `methods = ["blind"]`."""
    ranged_later: bool = False
    """A number whose range (finiteness included) its owner checks with a message of its own."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown field kind {self.kind!r}")


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """A TOML file's tables; `what` names the file's role in the error ("the sweep file", "the plan")."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ShiftbenchInputError(f"{path}: cannot read {what} ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ShiftbenchInputError(f"{path}: {what} is not UTF-8 text ({exc.reason})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ShiftbenchInputError(f"{path}: not valid TOML ({exc})") from exc


def check_table(where: str, table: Mapping[str, Any], fields: Mapping[str, Field]) -> None:
    """Refuse an unknown key (with the nearest known one), then any value not of its field's kind."""
    refuse_unknown(where, table, fields)
    for key, value in table.items():
        check_value(where, key, value, fields[key])


def refuse_unknown(where: str, table: Mapping[str, Any], known: Iterable[str], what: str = "key") -> None:
    """The first key (in the file's order) that is not known, with the nearest known one."""
    names = sorted(known)
    for key in table:
        if key not in names:
            raise ShiftbenchInputError(f"{where}: unknown {what} '{key}'{suggestion(str(key), names)}; "
                                       f"known: {', '.join(names)}")


def check_value(where: str, key: str, value: object, field: Field) -> None:
    if _holds(field.kind, value) or (field.ranged_later and _holds(field.kind, 0.0) and _is_number(value)):
        return
    example = f", e.g. {field.example}" if field.example else ""
    kind = "finite number" if field.kind == "number" else field.kind
    article = "" if kind == "true or false" else "a "
    raise ShiftbenchInputError(f"{where}: {key} must be {article}{kind}{example}; got {described(value)}")


def suggestion(word: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """` (did you mean 'x'?)` for the nearest known word, or nothing."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=cutoff)
    return f" (did you mean '{close[0]}'?)" if close else ""


def described(value: object) -> str:
    """A value as the user wrote it, with its kind when that is the problem."""
    if isinstance(value, str):
        return f'the string "{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return f"the list {value!r}"
    return repr(value)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _holds(kind: str, value: object) -> bool:
    if kind in ("string", "non-empty string"):
        return isinstance(value, str) and (kind == "string" or bool(value.strip()))
    if kind == "true or false":
        return isinstance(value, bool)
    if kind == "whole number":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return _is_number(value) and math.isfinite(value)  # type: ignore[arg-type]
    if kind == "list of strings":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, Mapping)

"""A sweep's methods: named by flags or in a sweep file, each resolved to a method before anything runs.

`--methods blind,mypkg.notes:NOTES,fast=slb:./ref.py:RAG` names methods by spec; a bare spec runs under
the method's own name, `NAME=SPEC` under the one given. A sweep file may instead (or as well) define

    [methods.notes4]
    from = "mypkg.notes:NOTES"      # any spec; default: the table's name (a registry or entry-point name)
    [methods.notes4.options]
    block_size = 4

and every table is a method of the sweep, in the file's order, unless `methods = [...]` under `[sweep]`
lists which run (then every table must be listed: a table left out is a typo). The config keeps the
names in `methods` and, for each name that is not a bare registry name, `{"from", "options"}` in
`method_specs` (a file's path made absolute), so a resume resolves exactly the same methods, and the
config hash covers them.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from methods.names import REGISTERED_METHODS
from simulators.errors import ShiftbenchInputError

if TYPE_CHECKING:  # resolving loads every shiftbench method: imported by what resolves, not by every reader
    from methods.spec import ResolvedMethod

__all__ = ["method_tables", "methods_from_file", "normalize_methods", "resolve_methods"]

_TABLE_KEYS = ("from", "options")


def method_tables(path: Path, raw: object) -> dict[str, dict[str, Any]]:
    """A sweep file's `[methods.NAME]` tables, checked: `from` a string, `options` a table, nothing else."""
    from methods.spec import absolute_spec, check_method_name

    if not isinstance(raw, dict):
        raise ShiftbenchInputError(f"{path}: methods must be a list of names, or [methods.NAME] tables")
    tables: dict[str, dict[str, Any]] = {}
    for name, table in raw.items():
        where = f"{path} [methods.{name}]"
        check_method_name(name, where)
        if not isinstance(table, dict):
            raise ShiftbenchInputError(f"{where}: must be a table with `from = \"SPEC\"` and [methods.{name}.options]")
        for key in table:
            if key not in _TABLE_KEYS:
                close = difflib.get_close_matches(key, _TABLE_KEYS, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ShiftbenchInputError(f"{where}: unknown key '{key}'{hint}; a method table takes from, options")
        spec = table.get("from", name)
        if not isinstance(spec, str) or not spec.strip():
            raise ShiftbenchInputError(f"{where}: from must be a method spec string (e.g. \"mypkg.notes:NOTES\")")
        options = table.get("options", {})
        if not isinstance(options, dict):
            raise ShiftbenchInputError(f"{where}: options must be a table ([methods.{name}.options])")
        tables[name] = {"from": absolute_spec(spec.strip(), path.parent), "options": dict(options)}
    return tables


def normalize_methods(methods: tuple[str, ...], specs: Mapping[str, Any], source: str, base: Path,
                      in_process: bool = False, env: tuple[str, ...] = ()) -> tuple[tuple[str, ...], dict[str, Any]]:
    """(names, specs) from what flags or a file gave: each `NAME=SPEC` or bare spec becomes a name with
    its entry; a name with a table keeps it; tables no longer named are dropped (a flag narrowed them)."""
    if not methods:
        raise ShiftbenchInputError(f"{source}: methods is empty; name at least one of "
                                   f"{', '.join(REGISTERED_METHODS)}")
    names: list[str] = []
    kept: dict[str, Any] = {}
    origin: dict[str, str] = {}
    resolve = resolver(in_process, env)
    for token in methods:
        name, entry = _one(token, specs, source, base, resolve)
        if name in origin:
            raise ShiftbenchInputError(f"{source}: two methods named '{name}' ({origin[name]}, {token}); "
                                       "name one with NAME=SPEC or a [methods.NAME] table")
        origin[name] = token
        names.append(name)
        if entry is not None:
            kept[name] = entry
    return tuple(names), kept


def _one(token: str, specs: Mapping[str, Any], source: str, base: Path,
         resolve: Resolver) -> tuple[str, dict[str, Any] | None]:
    from methods.spec import absolute_spec, check_method_name

    token = token.strip()
    if "=" in token:
        name, text = (part.strip() for part in token.split("=", 1))
        return check_method_name(name, source), {"from": absolute_spec(text, base), "options": {}}
    if token in specs:
        return token, dict(specs[token])
    if token in REGISTERED_METHODS:
        return token, None
    text = absolute_spec(token, base)
    resolved = resolve(text, {}, source, None)
    return resolved.name, (None if text == resolved.name else {"from": text, "options": {}})


def resolve_methods(methods: tuple[str, ...], specs: Mapping[str, Any], source: str, in_process: bool = False,
                    env: tuple[str, ...] = ()) -> dict[str, ResolvedMethod]:
    """Every method of a normalized config, resolved (each error one line): a user's in a worker
    (`runner.workers.resolve`: its code is never imported here), unless `in_process`."""
    resolve = resolver(in_process, env)
    resolved: dict[str, ResolvedMethod] = {}
    for name in methods:
        entry = specs.get(name)
        if entry is None:
            resolved[name] = resolve(name, {}, source, name)
            continue
        if not isinstance(entry, Mapping) or not isinstance(entry.get("from"), str):
            raise ShiftbenchInputError(f"{source}: method_specs['{name}'] must be a table with a `from` spec")
        resolved[name] = resolve(entry["from"], entry.get("options") or {}, f"{source} [methods.{name}]", name)
    return resolved


Resolver = Callable[[str, Mapping[str, Any], str, "str | None"], "ResolvedMethod"]


def resolver(in_process: bool, env: tuple[str, ...] = ()) -> Resolver:
    """How a spec is resolved: shiftbench's own methods (and everything under `in_process`) here, a
    user's in a worker with the worker environment and `env`."""
    from methods.spec import is_registered, resolve_method

    def resolve(text: str, options: Mapping[str, Any], where: str, name: str | None) -> ResolvedMethod:
        if in_process or is_registered(text):
            return resolve_method(text, options, where, name)
        from runner.workers.resolve import resolve_guest

        return resolve_guest(text, options, where, name, env=env)

    return resolve


def methods_from_file(path: Path, raw: Mapping[str, Any], table: dict[str, Any]) -> dict[str, Any]:
    """The config keys a sweep file's `[methods.NAME]` tables set (none without tables). Takes `methods`
    out of `table` (the file's top level, or its [sweep] table where a list may say which run)."""
    tables = raw.get("methods")
    if not isinstance(tables, dict):
        return {}
    if table.get("methods") is tables:
        del table["methods"]
    specs = method_tables(path, tables)
    listed = table.pop("methods", None)
    if listed is None:
        return {"methods": tuple(specs), "method_specs": specs}
    if isinstance(listed, str):
        listed = [listed]
    if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
        raise ShiftbenchInputError(f"{path}: [sweep] methods must be a list of names")
    for name in specs:
        if name not in listed:
            raise ShiftbenchInputError(f"{path}: [methods.{name}] is defined but [sweep] methods does not list it; "
                                       "list it or remove the table")
    return {"methods": tuple(listed), "method_specs": specs}

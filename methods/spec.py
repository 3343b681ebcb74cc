"""Find a method by its spec, configure it with its options, and say where it came from.

A spec is one of
    rag                      a shiftbench method (`methods.registry`), else an installed entry point
                             of the group `shiftbench.methods` (`methods.entry_points`)
    mypkg.notes:NOTES        a `MethodSpec` named NOTES in an importable module
    ./my_method.py:NOTES     a `MethodSpec` in a file (relative to where it was named; kept absolute)
    slb:mypkg.notes:MyNotes  a class of the reference's interface, through `methods.slb` (a file too)
Resolving imports the user's code, checks the options against what the spec declares, and gives a
`ResolvedMethod`: the spec configured under the name the sweep uses (its builder gets the options,
its block size follows a `block_size` option), and a `MethodSource` with the hash of its source.
Every failure is one `ShiftbenchInputError` line that names `where` (the flag or the sweep file's
table) and what to do.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from methods.base import MethodSetup, MethodSpec
from methods.entry_points import distribution_label, find_entry_point, installed_entry_points
from methods.loading import attribute, import_file, import_module, is_file_target
from methods.names import REGISTERED_METHODS
from methods.options import BLOCK_SIZE, check_options
from methods.slb import reference_spec
from methods.source import MethodSource, distribution_of, source_hash
from simulators.errors import ShiftbenchInputError
from simulators.protocol import JSON

__all__ = ["ADAPTER_PREFIX", "ResolvedMethod", "absolute_spec", "check_method_name", "configure", "is_registered",
           "resolve_method"]

ADAPTER_PREFIX = "slb:"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_REFERENCE_DEFAULT_NAME = "method"
"""The reference's base class's own `name`: a class that keeps it is named after itself instead."""


@dataclass(frozen=True)
class ResolvedMethod:
    name: str
    spec: MethodSpec
    """Configured: named `name`, its builder handed `options`, its block size set."""
    source: MethodSource
    options: Mapping[str, JSON]

    def provenance(self) -> dict[str, JSON]:
        return {"name": self.name, **self.source.to_json(), "options": dict(self.options),
                "learns": self.spec.learns, "block_size": self.spec.block_size}


def resolve_method(text: str, options: Mapping[str, Any] | None = None, where: str = "--methods",
                   name: str | None = None) -> ResolvedMethod:
    """The method `text` names, configured with `options`, to run as `name` (default: its own name)."""
    text = text.strip()
    if not text:
        raise ShiftbenchInputError(f"{where}: an empty method spec; name a method (`shiftbench methods` lists them)")
    if text.startswith(ADAPTER_PREFIX):
        return _adapter(text, options or {}, where, name)
    if ":" in text:
        return _native(text, options or {}, where, name)
    return _by_name(text, options or {}, where, name)


def absolute_spec(text: str, base: Path) -> str:
    """The spec with a file's path made absolute against `base` (the sweep file's folder, or the working
    directory for a flag), so a resume from elsewhere finds the same file."""
    prefix = ADAPTER_PREFIX if text.startswith(ADAPTER_PREFIX) else ""
    body = text.removeprefix(prefix)
    if ":" not in body:
        return text
    target, attr = body.rsplit(":", 1)
    if not is_file_target(target):
        return text
    return f"{prefix}{(base / Path(target).expanduser()).resolve()}:{attr}"


def check_method_name(name: str, where: str) -> str:
    if not _NAME.fullmatch(name):
        raise ShiftbenchInputError(f"{where}: method name '{name}' must be 1-64 letters, digits, '_', '-' or '.', "
                                   "starting with a letter or digit (name it with NAME=SPEC)")
    return name


def configure(spec: MethodSpec, name: str, values: Mapping[str, JSON]) -> MethodSpec:
    """`spec` as the sweep runs it: under `name`, its builder handed `values`, its block size the
    `block_size` option's when it declares one."""
    declared = {option.name for option in spec.options}
    block_size = values[BLOCK_SIZE] if BLOCK_SIZE in declared else spec.block_size
    own_build = spec.build

    def build(setup: MethodSetup) -> Any:
        return own_build(replace(setup, options=dict(values)))

    return replace(spec, name=name, build=build, block_size=block_size)


# --------------------------------------------------------------------------------------------- kinds

def _by_name(text: str, options: Mapping[str, Any], where: str, name: str | None) -> ResolvedMethod:
    registered = _registered(text)
    if registered is not None:
        module = sys.modules[registered.build.__module__]
        digest, count = source_hash(module, registry=True)
        source = MethodSource("registry", text, module.__name__, digest, count, distribution_of(module))
        return _finish(registered, name or text, options, where, source, text)
    point = find_entry_point(text)
    if point is None and is_file_target(text):
        raise _no_attribute(text, where)
    if point is None:
        known = list(REGISTERED_METHODS) + [p.name for p in installed_entry_points()]
        close = difflib.get_close_matches(text, known, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else _UNINSTALLED.get(text, "")
        raise ShiftbenchInputError(f"{where}: unknown method '{text}'{hint}; known: {', '.join(known)}; or name "
                                   "one by module:NAME, ./file.py:NAME or slb:module:Class")
    shown = f"entry point '{text}' ({point.value})"
    module = import_module(point.module, f"{where} ({shown})")
    found = attribute(module, point.attr, point.module, where, _is_spec, "MethodSpecs") if point.attr else module
    spec = _method_spec(found, shown, where)
    digest, count = source_hash(module)
    source = MethodSource("entry_point", text, point.value, digest, count, distribution_label(point))
    return _finish(spec, name or text, options, where, source, shown)


def _native(text: str, options: Mapping[str, Any], where: str, name: str | None) -> ResolvedMethod:
    module, attr, origin = _locate(text, where)
    found = attribute(module, attr, text.rsplit(":", 1)[0], where, _is_spec, "MethodSpecs")
    spec = _method_spec(found, text, where)
    digest, count = _hash(module, origin)
    source = MethodSource(origin, text, f"{_shown(module, origin)}:{attr}", digest, count,
                          _distribution(module, origin))
    return _finish(spec, name or spec.name, options, where, source, text)


def _adapter(text: str, options: Mapping[str, Any], where: str, name: str | None) -> ResolvedMethod:
    body = text.removeprefix(ADAPTER_PREFIX)
    if ":" not in body:
        raise ShiftbenchInputError(f"{where}: '{text}' names no class; write slb:module:Class or slb:./file.py:Class")
    module, attr, origin = _locate(body, where)
    cls = attribute(module, attr, body.rsplit(":", 1)[0], where, _is_class, "classes")
    chosen = check_method_name(name or _reference_name(cls, attr), where)
    spec, values = reference_spec(cls, chosen, text, options, where)
    digest, count = _hash(module, origin)
    source = MethodSource("adapter", text, f"{_shown(module, origin)}:{attr}", digest, count,
                          _distribution(module, origin))
    return ResolvedMethod(chosen, configure(spec, chosen, values), source, values)


# ------------------------------------------------------------------------------------------- helpers

def is_registered(text: str) -> bool:
    """Whether `text` names one of shiftbench's own methods (or one a test registered)."""
    return _registered(text) is not None


def _registered(text: str) -> MethodSpec | None:
    """shiftbench's own method of that name. The registry is imported only for one of its names: it loads
    the simulators' domains, which a worker (it resolves a user's method only) must never hold."""
    if text not in REGISTERED_METHODS and "methods.registry" not in sys.modules:
        return None  # (a registry already loaded may hold more: a test registers its own)
    from methods.registry import METHOD_REGISTRY

    return METHOD_REGISTRY.get(text)


_UNINSTALLED = {"notes": " (the guide's example registers the entry point 'notes' once installed: "
                         "pip install -e examples/notes_method)"}
"""Entry points the docs name that are not shiftbench's own: said so when they are not installed."""


def _no_attribute(text: str, where: str) -> ShiftbenchInputError:
    """A file named without `:NAME`: the MethodSpecs it has, to pick one."""
    module = import_file(Path(text), where)
    specs = sorted(name for name, value in vars(module).items() if not name.startswith("_") and _is_spec(value))
    classes = sorted(name for name, value in vars(module).items()
                     if not name.startswith("_") and _is_class(value) and value.__module__ == module.__name__
                     and all(hasattr(value, h) for h in ("context", "update")))
    if specs:
        listed = f"its MethodSpecs: {', '.join(specs)}; write {text}:{specs[0]}"
    elif classes:
        listed = f"it has no MethodSpec, but classes of the reference's interface: write slb:{text}:{classes[0]}"
    else:
        listed = "it has no MethodSpec (docs/methods.md says how to write one)"
    return ShiftbenchInputError(f"{where}: {text} names a file but no method in it; {listed}")


def _locate(body: str, where: str) -> tuple[ModuleType, str, str]:
    target, attr = body.rsplit(":", 1)
    if is_file_target(target):
        return import_file(Path(target), where), attr, "file"
    return import_module(target, where), attr, "module"


def _method_spec(found: object, shown: str, where: str) -> MethodSpec:
    if isinstance(found, MethodSpec):
        return found
    looks_reference = isinstance(found, type) and all(hasattr(found, h) for h in ("context", "update"))
    hint = (f"; a class of the reference's interface runs as slb:{shown}" if looks_reference
            else "; export a methods.base.MethodSpec (docs/methods.md)")
    raise ShiftbenchInputError(f"{where}: {shown} is {_what(found)}, not a MethodSpec{hint}")


def _is_spec(value: object) -> bool:
    return isinstance(value, MethodSpec)


def _is_class(value: object) -> bool:
    return isinstance(value, type)


def _finish(spec: MethodSpec, name: str, options: Mapping[str, Any], where: str, source: MethodSource,
            shown: str) -> ResolvedMethod:
    check_method_name(name, where)
    values = check_options(spec.options, options, f"{where} ({shown})")
    return ResolvedMethod(name, configure(spec, name, values), source, values)


def _reference_name(cls: object, attr: str) -> str:
    own = getattr(cls, "name", None)
    return own if isinstance(own, str) and own and own != _REFERENCE_DEFAULT_NAME else attr.lower()


def _hash(module: ModuleType, origin: str) -> tuple[str, int]:
    if origin == "file":
        return source_hash(module, registry=False) if module.__file__ else ("", 0)
    return source_hash(module)


def _shown(module: ModuleType, origin: str) -> str:
    return str(module.__file__) if origin == "file" else module.__name__


def _distribution(module: ModuleType, origin: str) -> str:
    return "" if origin == "file" else distribution_of(module)


def _what(found: object) -> str:
    if isinstance(found, type):
        return f"the class {found.__name__}"
    if callable(found):
        return f"a {type(found).__name__} ({getattr(found, '__name__', '?')})"
    return f"a {type(found).__name__}"

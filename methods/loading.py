"""Find the object a method spec names: `module:NAME` on the import path, or `path/to/file.py:NAME`.

The user's code runs here (its import), so everything it can raise becomes one line that names the
spec, the file and line where it failed, and what to do; nothing else of a traceback reaches the user.
A file is imported once per process (and once more after an edit) under a name made from its path and
content (dataclasses and pickling look classes up in `sys.modules`), and never put on the import path:
a method in a file is that file.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import sys
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from simulators.errors import ShiftbenchInputError

__all__ = ["attribute", "import_file", "import_module", "is_file_target"]

_STDLIB = sysconfig.get_paths()["stdlib"]


def is_file_target(target: str) -> bool:
    """`./notes.py`, `/abs/notes.py`, `sub/notes.py`: a file; `mypkg.notes`: a module."""
    return target.endswith(".py") or "/" in target or "\\" in target


def import_module(name: str, where: str) -> ModuleType:
    if not name or not all(part.isidentifier() for part in name.split(".")):
        raise ShiftbenchInputError(f"{where}: '{name}' is not a module name (expected e.g. mypkg.notes) "
                                   "nor a file (expected e.g. ./notes.py)")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise ShiftbenchInputError(f"{where}: no module named '{exc.name}'; install the package or put its "
                                       "folder on PYTHONPATH") from None
        raise _import_failed(where, name, exc) from None
    except Exception as exc:  # the user's module: anything it raises is theirs to fix
        raise _import_failed(where, name, exc) from None


def import_file(path: Path, where: str) -> ModuleType:
    path = path.expanduser().resolve()
    if not path.exists():
        raise ShiftbenchInputError(f"{where}: no file {path}")
    if not path.is_file():
        raise ShiftbenchInputError(f"{where}: {path} is not a file (name a .py file)")
    # Named by path and content: a file edited since (a check run after a fix) is imported afresh.
    content = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    module_name = f"shiftbench_user_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}_{content}"
    loaded = sys.modules.get(module_name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ShiftbenchInputError(f"{where}: {path} cannot be imported as Python (name a .py file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file
        del sys.modules[module_name]
        raise _import_failed(where, str(path), exc) from None
    return module


def attribute(module: ModuleType, name: str, shown: str, where: str, wanted: Callable[[object], bool],
              kind: str) -> object:
    """`module.name`; when missing, the error lists the module's objects that `wanted` accepts (`kind`)."""
    if not name.isidentifier():
        raise ShiftbenchInputError(f"{where}: '{name}' is not a Python name (expected {shown}:NAME)")
    try:
        return getattr(module, name)
    except AttributeError:
        candidates = sorted(n for n, value in vars(module).items() if not n.startswith("_") and wanted(value))
        close = difflib.get_close_matches(name, candidates, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        listed = f"; its {kind}: {', '.join(candidates[:8])}" if candidates else f"; it has no {kind}"
        raise ShiftbenchInputError(f"{where}: {shown} has no '{name}'{hint}{listed}") from None


def _import_failed(where: str, what: str, exc: BaseException) -> ShiftbenchInputError:
    return ShiftbenchInputError(f"{where}: importing {what} failed{_place(exc)}: {type(exc).__name__}: "
                                f"{_first_line(exc)}")


def _place(exc: BaseException) -> str:
    """Where in the user's code it failed: a syntax error's own line, else the innermost frame."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" at {exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if not f.filename.startswith(("<", _STDLIB)) and "importlib" not in f.filename]
    return f" at {theirs[-1].filename}:{theirs[-1].lineno}" if theirs else ""


def _first_line(exc: BaseException) -> str:
    text = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)
    return (text.strip().splitlines() or [""])[0][:200]

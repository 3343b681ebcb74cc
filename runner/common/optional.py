"""Optional extras: a feature that needs a heavy library imports it here, on first use, by name.

`shiftbench report --html` needs matplotlib and `export --format inspect` needs inspect-ai; both would
cost every other command seconds of start-up (matplotlib alone takes 2 s to import on a loaded 2-core
machine), and an overnight runner does not need either. So the modules that use them are imported only
when asked for, and a missing extra is one line telling the user what to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from simulators.errors import ShiftbenchInputError

__all__ = ["MissingExtra", "load_extra"]


class MissingExtra(ShiftbenchInputError):
    """A feature needs an optional extra that is not installed."""


def load_extra(module: str, extra: str, feature: str) -> ModuleType:
    """Import `module` (a shiftbench module that needs the extra `extra`), or raise one clear line."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] in {"runner", "methods", "simulators"}:
            raise
        raise MissingExtra(f"{feature} needs the '{extra}' extra ({exc.name} is not installed); "
                           f"pip install 'shiftbench[{extra}]'") from exc

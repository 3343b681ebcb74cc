"""`shiftbench methods`: every method this installation can see, and where each comes from.

The registry's methods, then the installed entry points of `shiftbench.methods` (each resolved, so a
broken one shows its error on its own line instead of hiding the rest; an entry point's code is
imported in a worker, never here). Other methods (a module, a
file, a class of the reference's interface) are named by their spec; `methods check SPEC` checks one.
"""

from __future__ import annotations

from methods.entry_points import installed_entry_points
from methods.registry import METHOD_REGISTRY
from runner.common.tables import wrap_prose
from runner.config.methods import resolver
from simulators.errors import ShiftbenchInputError

__all__ = ["render_methods"]


NAME_WIDTH = 12
"""The name column: a method's summary starts after it, and its continuation lines under the summary."""


def render_methods(width: int | None = None) -> str:
    """One line per method (at a terminal's `width`, its summary wrapped under itself)."""
    lines = []
    for name in METHOD_REGISTRY:
        lines.append(_line(name))
    for point in installed_entry_points():
        if point.name not in METHOD_REGISTRY:
            lines.append(_line(point.name))
    lines = [wrap_prose(line, width, " " * (NAME_WIDTH + 1)) for line in lines]
    lines.append("")
    lines.append(wrap_prose("Also: --methods module:NAME, ./file.py:NAME, slb:module:Class (the reference's "
                            "interface); NAME=SPEC names one. `shiftbench methods check SPEC` checks one.", width))
    return "\n".join(lines)


def _line(name: str) -> str:
    try:
        method = resolver(in_process=False)(name, {}, f"method '{name}'", None)  # an entry point's in a worker
    except ShiftbenchInputError as exc:
        return f"{name:<{NAME_WIDTH}} cannot be loaded: {exc}"
    spec, source = method.spec, method.source
    calls = "extra model calls" if spec.uses_model else "no extra model calls"
    where = "shiftbench" if source.origin == "registry" else f"entry point {source.target}" + (
        f" ({source.distribution})" if source.distribution else "")
    return f"{name:<{NAME_WIDTH}} {spec.summary}  [{calls}; {where}]"

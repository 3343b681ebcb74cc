"""Methods that installed packages register: entry points of the group `shiftbench.methods`.

A package declares `[project.entry-points."shiftbench.methods"] notes = "mypkg.notes:NOTES"` and, once
installed, `--methods notes` finds it (a registry name wins over an entry point of the same name).
Nothing is imported until a method is asked for by name.
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["GROUP", "distribution_label", "find_entry_point", "installed_entry_points"]

GROUP = "shiftbench.methods"


def installed_entry_points() -> list[metadata.EntryPoint]:
    """Every entry point of the group, by name (the first installed wins a name two packages declare)."""
    seen: dict[str, metadata.EntryPoint] = {}
    for point in metadata.entry_points(group=GROUP):
        seen.setdefault(point.name, point)
    return [seen[name] for name in sorted(seen)]


def find_entry_point(name: str) -> metadata.EntryPoint | None:
    return next((point for point in installed_entry_points() if point.name == name), None)


def distribution_label(point: metadata.EntryPoint) -> str:
    dist = point.dist
    return f"{dist.name} {dist.version}" if dist is not None else ""

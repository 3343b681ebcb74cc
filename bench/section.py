"""One benchmark's result: rows of named values, the columns a table shows, and notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Row", "Section", "render"]

Row = dict[str, Any]


@dataclass
class Section:
    name: str
    what: str
    """One sentence: what is measured and how."""
    columns: list[str]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    """How long the benchmark itself took."""
    conditions: dict[str, Any] = field(default_factory=dict)
    """What the machine was like when it ran (load, thread-hop latency), set by the runner."""

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "what": self.what, "rows": self.rows, "notes": self.notes,
                "seconds": round(self.seconds, 2), "conditions": self.conditions}


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "-".join(_cell(v) for v in value)
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def render(section: Section) -> str:
    """A plain text table, columns sized to their widest cell."""
    cells = [[_cell(row.get(column)) for column in section.columns] for row in section.rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(section.columns)]
    lines = [f"== {section.name} ({section.seconds:.1f} s) ==", section.what,
             "  ".join(c.ljust(w) for c, w in zip(section.columns, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths, strict=True)))
              for r in cells]
    lines += [f"  * {note}" for note in section.notes]
    return "\n".join(lines)

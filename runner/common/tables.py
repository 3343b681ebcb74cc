"""Fixed-width text tables, apart from the report so a module that prints one (the pilot's projection
at the start of a run) does not import the report's statistics (numpy)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["text_table"]


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A fixed-width table; `align` holds 'l' or 'r' per column."""
    widths = [max([len(headers[i])] + [len(row[i]) for row in rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        padded = [cell.rjust(width) if side == "r" else cell.ljust(width)
                  for cell, width, side in zip(cells, widths, align, strict=True)]
        return "  ".join(padded).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])

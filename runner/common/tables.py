"""Fixed-width text tables and prose for a terminal, apart from the report so a module that prints one
(the pilot's projection at the start of a run) does not import the report's statistics (numpy).

`text_table` with no width lays a table out at its natural width (what a pipe, a file or a test reads).
Given the terminal's width it never lets the terminal wrap a row mid-cell; it tries, in order:
1. the natural layout, when it fits;
2. wrapping within cells: headers and text cells break between words, numbers never break;
3. panels: the leading text columns (model, method, ...) repeated, the other columns split over as
   many tables one above the other as it takes;
4. a vertical layout, one `header  value` line per cell, when even one column beside the keys does
   not fit.
A single word longer than the width (a long path) is kept whole, so it can still be copied.

`wrap_prose` wraps text between words, `join_fitted` joins the parts of a log line (the plain display's
status) into as few lines of the width as it takes, and `say_fitted` prints a message of a command as
the terminal shows it. Error lines (`shiftbench: error: ...`) never pass through them: an error is one
line by contract, for scripts that read it.
"""

from __future__ import annotations

import bisect
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence

__all__ = ["MIN_WIDTH", "join_fitted", "say_fitted", "terminal_width", "text_table", "wrap_prose"]

GAP = 2
"""Spaces between columns."""
MIN_WIDTH = 20
"""The narrowest width laid out; a smaller COLUMNS is read as this."""


def terminal_width() -> int | None:
    """The width to lay output out at: COLUMNS when set, else the terminal's when stdout is one, else None
    (a pipe or a file: the natural layout, whole rows for grep and scripts)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    if sys.stdout.isatty():
        return max(MIN_WIDTH, shutil.get_terminal_size().columns)
    return None


def wrap_prose(text: str, width: int | None, indent: str = "  ") -> str:
    """Each line of `text` wrapped between words at `width` (None: as it is). A continuation line keeps
    its line's own indent plus `indent`, or lines up under a bullet's text; lines inside a ``` fence
    (code, a policy block) are kept as they are."""
    if width is None:
        return text
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        fence = line.lstrip().startswith("```")
        if fenced or fence or len(line) <= width:
            out.append(line)
        else:
            lead = line[:len(line) - len(line.lstrip())]
            hang = lead + ("  " if line.lstrip().startswith(("- ", "* ")) else indent)
            out += textwrap.wrap(line, width, initial_indent="", subsequent_indent=hang[:width // 2],
                                 break_long_words=False, break_on_hyphens=False, drop_whitespace=True) or [""]
        fenced ^= fence
    return "\n".join(out)


def say_fitted(text: str) -> None:
    """Print a command's message (a run's `Journal: ...` line, a probe's answer) wrapped to the terminal's
    width, as it is in a pipe; the commands pass it where they would pass `print`."""
    print(wrap_prose(text, terminal_width()), flush=True)


def join_fitted(parts: Sequence[str], separator: str, width: int | None, indent: str = "  ") -> str:
    """`parts` joined by `separator` on one line, or, at a width, on as many lines as it takes: each
    break falls between two parts, so no figure is cut, and a continuation line starts with `indent`
    and the separator (a log reader sees it continues the line above). A part wider than the width
    alone wraps between its words."""
    if width is None:
        return separator.join(parts)
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(separator) + len(part) <= width:
            lines[-1] += separator + part
        else:
            lines.append(part if not lines else indent + separator.lstrip() + part)
    return wrap_prose("\n".join(lines), width, indent)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str, width: int | None = None,
               keys: int | None = None) -> str:
    """A fixed-width table; `align` holds 'l' or 'r' per column; `width` the terminal's (None: natural);
    `keys`: how many leading columns name a row, repeated in every panel (default: the leading text ones)."""
    natural = [max([len(headers[i])] + [len(row[i]) for row in rows]) for i in range(len(headers))]
    if width is None or _span(natural) <= width:
        return _natural(headers, rows, align, natural)
    fitted = _fit(headers, rows, width)
    if fitted is not None and _tall_rows(rows, fitted) <= TALL_SHARE * len(rows):
        return _wrapped(headers, rows, align, fitted)
    panels = _panels(headers, rows, align, width, keys)
    if panels is not None:
        return panels
    return _wrapped(headers, rows, align, fitted) if fitted is not None else _vertical(headers, rows, width)


TALL_SHARE = 0.25
"""Wrapping that makes more than this share of the rows take two lines or more reads worse than panels."""


def _span(widths: Sequence[int]) -> int:
    return sum(widths) + GAP * (len(widths) - 1)


def _natural(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str, widths: Sequence[int]) -> str:
    def line(cells: Sequence[str]) -> str:
        padded = [cell.rjust(width) if side == "r" else cell.ljust(width)
                  for cell, width, side in zip(cells, widths, align, strict=True)]
        return (" " * GAP).join(padded).rstrip()

    rule = (" " * GAP).join("-" * width for width in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def _longest_word(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


def _fit(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> list[int] | None:
    """Column widths that fit `width` by wrapping cells between words, or None when the longest words
    alone are too wide. Each step narrows the column where the fewest cells would wrap (headers first,
    then a rare long cell such as "no interval (1 family)"), so as few rows as possible grow taller."""
    columns = range(len(headers))
    lengths = [sorted(len(row[i]) for row in rows) for i in columns]
    widths = [max([len(headers[i]), *lengths[i][-1:]]) for i in columns]
    least = [max(1, _longest_word(headers[i]), *(_longest_word(row[i]) for row in rows)) for i in columns]
    if _span(least) > width:
        return None
    while _span(widths) > width:
        # Cells longer than one less than the width now, i.e. that would wrap (further) after this step.
        def cost(i: int) -> tuple[int, int]:
            return len(lengths[i]) - bisect.bisect_right(lengths[i], widths[i] - 1), least[i] - widths[i]

        widths[min((i for i in columns if widths[i] > least[i]), key=cost)] -= 1
    return widths


def _tall_rows(rows: Sequence[Sequence[str]], widths: Sequence[int]) -> int:
    return sum(any(len(cell) > width for cell, width in zip(row, widths, strict=True)) for row in rows)


def _cell_lines(text: str, width: int) -> list[str]:
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def _wrapped(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str, widths: Sequence[int]) -> str:
    def block(cells: Sequence[str], bottom: bool) -> list[str]:
        pieces = [_cell_lines(cell, width) for cell, width in zip(cells, widths, strict=True)]
        height = max(len(piece) for piece in pieces)
        # Headers sit on the rule (bottom-aligned); a row's cells start on its first line.
        pieces = [([""] * (height - len(p)) + p) if bottom else (p + [""] * (height - len(p))) for p in pieces]
        return [(" " * GAP).join(piece[n].rjust(w) if side == "r" else piece[n].ljust(w)
                                 for piece, w, side in zip(pieces, widths, align, strict=True)).rstrip()
                for n in range(height)]

    rule = (" " * GAP).join("-" * width for width in widths)
    return "\n".join([*block(headers, True), rule, *(line for row in rows for line in block(row, False))])


def _panels(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str, width: int,
            key_count: int | None) -> str | None:
    """The key columns and as many of the others as fit with few rows wrapped, panel after panel; None
    when the keys and one other column do not fit side by side."""
    if key_count is None:  # the leading text columns (model, method, setting): what names a row
        key_count = len(align) - len(align.lstrip("l"))
    keys = list(range(min(key_count, len(align) - 1)))

    def fits(chosen: list[int], tall: float) -> list[int] | None:
        picked = [[row[i] for i in chosen] for row in rows]
        found = _fit([headers[i] for i in chosen], picked, width)
        return found if found is not None and _tall_rows(picked, found) <= tall else None

    groups: list[list[int]] = []
    for column in range(len(keys), len(headers)):
        if groups and fits([*keys, *groups[-1], column], TALL_SHARE * len(rows)) is not None:
            groups[-1].append(column)
        elif fits([*keys, column], len(rows)) is not None:
            groups.append([column])
        else:
            return None
    tables = []
    for group in groups:
        chosen = [*keys, *group]
        widths = fits(chosen, len(rows))
        assert widths is not None  # every group was built to fit
        tables.append(_wrapped([headers[i] for i in chosen], [[row[i] for i in chosen] for row in rows],
                               "".join(align[i] for i in chosen), widths))
    return "\n\n".join(tables)


def _vertical(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> str:
    """One `header  value` line per cell, a blank line between rows; values wrap beside their header,
    or, when a word of the value is too long to sit beside it (a model's name), under it, indented."""
    label = min(max(len(h) for h in headers), width // 2)
    room = max(1, width - label - GAP)
    records = []
    for row in rows:
        lines = []
        for header, cell in zip(headers, row, strict=True):
            names = textwrap.wrap(header, label, break_long_words=False) or [""]
            if _longest_word(cell) > room:
                lines += [*names, *(" " * GAP + piece for piece in _cell_lines(cell, width - GAP))]
                continue
            pieces = _cell_lines(cell, room)
            for n in range(max(len(pieces), len(names))):
                name = names[n] if n < len(names) else ""
                piece = pieces[n] if n < len(pieces) else ""
                lines.append(f"{name.ljust(label)}{' ' * GAP}{piece}".rstrip())
        records.append("\n".join(lines))
    return "\n\n".join(records)

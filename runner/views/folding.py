"""What `show` prints of one text (a task, a thought, a tool call, an observation): its lines as a
terminal of the panel's width shows them, cut to a number of lines with a line saying what was folded.

A retail episode's observations are JSON objects of 400-1,700 characters on one line and the store's
~150-line policy document, so printed whole an episode took 80 lines at 80 columns and three failed
ones 260. Every text is therefore wrapped here, at the width the panel has, rather than by rich: the
lines counted are the lines printed, so an episode's budget (`runner.views.episode_layout`) holds.

`Seen` is one `show` output's memory of the longer observations it printed: an observation printed
before in the same output (the same bytes: the policy document every episode reads, an order looked
up twice) is named, not printed again, with or without `--full` (there it was printed whole above).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = ["Folded", "Seen", "fold", "screen_lines"]

MIN_REPEAT_LINES = 3
"""An observation shorter than this many lines (printed whole) prints again when it repeats: the line
naming where it was printed first would be about as long."""


@dataclass(frozen=True)
class Folded:
    lines: tuple[str, ...]
    """The lines printed: the first follows the label (`observation: `), the others start the line."""
    note: str = ""
    """What was left out and how to see it, "[143 more lines folded: --full shows them]"; "" when whole."""


def screen_lines(text: str, width: int, first: int) -> list[tuple[int, int, int]]:
    """Where `text` breaks on a terminal `width` wide whose first line has `first` columns left after its
    label: (line of `text`, start, end) of each printed line. A line breaks at its last space that fits
    (the space dropped), a word longer than the width by characters."""
    pieces = []
    room = max(1, first)
    for number, line in enumerate(text.split("\n")):
        start = 0
        while len(line) - start > room:
            cut = line.rfind(" ", start + 1, start + room + 1)
            end = cut if cut > 0 else start + room
            pieces.append((number, start, end))
            start = end + 1 if cut > 0 else end
            room = width
        pieces.append((number, start, len(line)))
        room = width
    return pieces


def fold(text: str, width: int, first: int, cap: int | None) -> Folded:
    """`text` wrapped at `width` (`first` columns on the label's line), at most `cap` printed lines, the
    note among them (None: whole)."""
    source = text.expandtabs(8).split("\n")
    pieces = screen_lines("\n".join(source), width, first)
    shown = pieces if cap is None or len(pieces) <= cap else pieces[:max(1, cap - 1)]
    lines = tuple(source[number][start:end] for number, start, end in shown)
    if len(shown) == len(pieces):
        return Folded(lines)
    number, _, end = shown[-1]
    rest = len(source[number]) - end
    more = (f"{len(source) - number - 1 + (rest > 0):,} more lines" if number < len(source) - 1
            else f"{rest:,} more characters")
    return Folded(lines, f"[{more} folded: --full shows them]")


@dataclass
class Seen:
    """The longer observations one output printed (sha256 -> where), so a repeat names that place."""

    _where: dict[str, str] = field(default_factory=dict)

    def where(self, observation: str) -> str | None:
        return self._where.get(_digest(observation))

    def remember(self, observation: str, where: str, lines: int) -> None:
        """`lines`: what the observation takes printed whole (folded, it was named for --full all the same)."""
        if lines >= MIN_REPEAT_LINES:
            self._where.setdefault(_digest(observation), where)

    def copy(self) -> Seen:
        return Seen(dict(self._where))

    def adopt(self, other: Seen) -> None:
        """What `other` (a copy a layout was tried on) learned, now this output's."""
        self._where = dict(other._where)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()

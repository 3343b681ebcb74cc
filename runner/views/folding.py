"""What `show` prints of a tool's observation: bounded, and each document once.

A retail episode's first call reads the store's ~160-line policy document, and every episode of the
scenario reads the same one, so three episodes printed whole were ~750 lines, mostly that document
three times. `Observations` is one `show` output's memory of what it printed:
- an observation longer than `FOLD_AFTER` lines prints its first `KEPT_LINES` lines and says how many
  it left out and that `--full` prints them. A line is counted as the lines a terminal of
  `LINE_CHARS` columns shows it in, so one 1,700-character JSON object (a product's variants) folds
  too, to its first characters;
- an observation of at least `SAME_MIN_LINES` lines printed before in this output (the same bytes)
  is never printed again, with or without `--full`: one line names the episode and turn above that
  printed it.
Short observations (an id, `{"accepted": true}`) are always printed, even when they repeat: a line
saying "the same as above" would be longer than they are.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = ["FOLD_AFTER", "KEPT_LINES", "SAME_MIN_LINES", "Observations"]

FOLD_AFTER = 12
"""An observation with more lines than this is folded (unless `--full`)."""
KEPT_LINES = 8
"""The lines of a folded observation that are printed."""
LINE_CHARS = 100
"""A longer line counts as one line per this many characters (what a terminal wraps it into)."""
SAME_MIN_LINES = 4
"""An observation of at least this many lines is printed once per output; a repeat names where it was."""


@dataclass
class Observations:
    full: bool = False
    """`--full`: every observation whole (a repeated document is still named, not reprinted)."""
    _seen: dict[str, str] = field(default_factory=dict)
    """sha256 of an observation printed in full or folded -> where it was printed."""

    def text(self, observation: str, where: str) -> str:
        """What to print for `observation`, returned by the call printed at `where`
        (e.g. "task rt_1 turn 1")."""
        lines = observation.split("\n")
        if len(lines) >= SAME_MIN_LINES:
            digest = hashlib.sha256(observation.encode()).hexdigest()
            if digest in self._seen:
                return f"(the same {len(lines)}-line document as {self._seen[digest]} above)"
            self._seen[digest] = where
        if self.full or sum(_shown_lines(line) for line in lines) <= FOLD_AFTER:
            return observation
        return _folded(lines)


def _shown_lines(line: str) -> int:
    return max(1, -(-len(line) // LINE_CHARS))


def _folded(lines: list[str]) -> str:
    """The first `KEPT_LINES` shown lines, then what is left out: lines, or characters of a long one."""
    kept: list[str] = []
    room = KEPT_LINES
    for number, line in enumerate(lines):
        if _shown_lines(line) <= room:
            kept.append(line)
            room -= _shown_lines(line)
            continue
        if len(lines) == 1:  # one long line (a JSON object): cut it, count characters
            return f"{line[:room * LINE_CHARS]}\n({len(line) - room * LINE_CHARS:,} more characters; --full)"
        return "\n".join([*kept, f"({len(lines) - number} more lines; --full)"])
    return "\n".join(kept)  # unreachable: only a text longer than FOLD_AFTER > KEPT_LINES is folded

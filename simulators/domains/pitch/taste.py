"""Read a customer's taste out of a prose Oracle bulletin, and weigh a task's sheet with it.

A dataset in the public export's layout carries no weights: each task line names its product
(`evaluator.metadata.product`), and the window's Oracle bulletin (`windows.json`) describes the
customer in prose. The parts the grader relies on are structural only:

    <any prose>
    They like: <phrase>; <phrase>; ...
    They dislike: <phrase>; <phrase> (do NOT bring this up); ...
    <any prose>

- each list sits on its own line, after the marker `They like:` / `They dislike:` (case ignored);
- phrases are separated by `;`, and the line may end with one `.`;
- a dislike marked `(do NOT bring this up)` (case ignored) is a red line.

Weights: like +1, dislike -1, red line -3. The prose cannot tell a strong like (+2 in the reference)
from a plain one, so every like weighs +1: a pitch that states every liked sheet fact still scores
exactly as in the reference, but partial coverage may score slightly differently (coverage is liked
weight mentioned / total liked weight).

Phrases are matched to the task's own sheet: a bulletin phrase that equals one of the instruction's
fact lines (case, surrounding space and a final `.` ignored) weighs that fact's (attribute, value).
A phrase not on this sheet does not matter for this task, since only sheet attributes are rubric
items; a sheet fact the bulletin does not list is neutral. No global phrase table is needed, and the
grader depends on no particular wording, only on this structure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domains.pitch.attributes import rule_id
from simulators.domains.pitch.rubric import RED_LINE
from simulators.domains.pitch.sheet import Sheet, fact_lines
from simulators.protocol import ScenarioEnvironment, Task

__all__ = ["BulletinError", "DISLIKE", "LIKE", "Taste", "bulletin_weights", "parse_taste", "window_bulletin"]

LIKE, DISLIKE = 1, -1
_MARKERS = {"like": re.compile(r"^\s*they like:(.*)$", re.IGNORECASE | re.MULTILINE),
            "dislike": re.compile(r"^\s*they dislike:(.*)$", re.IGNORECASE | re.MULTILINE)}
_RED_LINE = re.compile(r"\s*\(\s*do not bring this up\s*\)\s*$", re.IGNORECASE)


class BulletinError(ValueError):
    """A bulletin, or the task it should weigh, does not have the structure the grader reads."""


@dataclass(frozen=True)
class Taste:
    weights: Mapping[str, int]
    """Normalized phrase -> weight (+1 like, -1 dislike, -3 red line)."""

    def weight(self, fact: str) -> int | None:
        """The weight of a sheet line, or None when the bulletin does not list it."""
        return self.weights.get(normalize_phrase(fact))


def normalize_phrase(text: str) -> str:
    return " ".join(text.split()).casefold().removesuffix(".").rstrip()


@functools.lru_cache(maxsize=256)
def parse_taste(bulletin: str) -> Taste:
    """The like / dislike / red-line phrases of a bulletin. Cached: a window's bulletin is parsed once
    however many of its tasks are graded. Raises `BulletinError` (without naming the window: the
    caller adds that) when the structure is missing or contradicts itself."""
    weights: dict[str, int] = {}
    for kind, marker in _MARKERS.items():
        found = marker.findall(bulletin)
        if len(found) != 1:
            raise BulletinError(f"expected exactly one line starting 'They {kind}:', found {len(found)}")
        body = found[0].strip().removesuffix(".")
        for raw in re.split(r"\s*;\s*", body):
            phrase, red = _RED_LINE.sub("", raw), bool(_RED_LINE.search(raw))
            key = normalize_phrase(phrase)
            if not key:
                continue
            if red and kind == "like":
                raise BulletinError(f"'{raw.strip()}' is a liked phrase marked as a red line")
            weight = RED_LINE if red else LIKE if kind == "like" else DISLIKE
            if weights.get(key, weight) != weight:
                raise BulletinError(f"'{phrase.strip()}' is listed with two different weights")
            weights[key] = weight
    return Taste(weights)


def window_bulletin(environment: ScenarioEnvironment, task: Task) -> str:
    """The Oracle bulletin of the task's window (`task.window` -> the `windows.json` entry)."""
    found = [w.oracle_bulletin for w in environment.windows if w.window == task.window]
    if len(found) != 1:
        raise BulletinError(f"{task.scenario} window {task.window}: task {task.task_id} needs exactly one "
                            f"windows.json entry for its window, found {len(found)}")
    return found[0]


def bulletin_weights(environment: ScenarioEnvironment, task: Task, sheet: Sheet) -> dict[str, int]:
    """Rule id -> weight for the values this task's sheet states, read off its window's bulletin."""
    where = f"{task.scenario} window {task.window}"
    try:
        taste = parse_taste(window_bulletin(environment, task))
    except BulletinError as error:
        raise BulletinError(f"{where}: cannot read the customer's taste from the Oracle bulletin: {error}"
                            ) from None
    facts = [item.fact for item in sheet.items]
    if fact_lines(task.instruction) != facts:
        raise BulletinError(f"{where}: task {task.task_id}: the instruction's fact lines do not pair one to "
                            f"one with the attributes of evaluator.metadata.product, so the bulletin's "
                            f"phrases cannot be matched to sheet values")
    weights = {rule_id(item.attribute, item.value): taste.weight(item.fact) for item in sheet.items}
    if all(weight is None for weight in weights.values()):
        raise BulletinError(f"{where}: task {task.task_id}: none of the sheet's fact lines {facts} appears in "
                            f"the bulletin's like or dislike lists; the lists must repeat sheet lines verbatim")
    return {rule: weight or 0 for rule, weight in weights.items()}

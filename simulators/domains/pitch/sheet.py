"""The product sheet: rendered into an instruction, read back out of one.

An instruction (built-in or the public export's) looks like

    Current timestamp: 12

    Product to pitch:
    Product: Kestrel Arc (reading lamp)
    Facts:
      - a mid-range price point
      - trending right now

    Write your pitch.

The agent side (`parse_sheet`) recognizes which value each fact line states through the lexicon. The
grader side (`task_sheet`) trusts the evaluator's product record for the values and takes the fact
text from the instruction, pairing them in canonical order, because that is how both the built-in
suite and the public export list them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domains.pitch.attributes import ATTRIBUTES
from simulators.domains.pitch.lexicon import find_cues
from simulators.domains.pitch.wording import LABELS
from simulators.protocol import JSON, Task

__all__ = ["Sheet", "SheetItem", "parse_sheet", "render_instruction", "task_sheet"]

_PRODUCT_LINE = re.compile(r"^\s*Product:\s*(.+?)\s*(?:\((.+)\))?\s*$", re.MULTILINE)
_FACT_LINE = re.compile(r"^\s*-\s+(.+?)\s*$")


@dataclass(frozen=True)
class SheetItem:
    attribute: str
    value: str
    fact: str
    """The line as the sheet words it."""


@dataclass(frozen=True)
class Sheet:
    name: str
    category: str
    items: tuple[SheetItem, ...]

    def value_of(self, attribute: str) -> str | None:
        return next((item.value for item in self.items if item.attribute == attribute), None)


def render_instruction(timestamp: int, lead: str, sheet: Sheet, closing: str) -> str:
    facts = "\n".join(f"  - {item.fact}" for item in sheet.items)
    return (f"Current timestamp: {timestamp}\n\n{lead}\nProduct: {sheet.name} ({sheet.category})\n"
            f"Facts:\n{facts}\n\n{closing}")


def fact_lines(instruction: str) -> list[str]:
    """The bullet lines after `Facts:`, up to the first line that is not a bullet."""
    lines = instruction.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().lower() == "facts:"), None)
    if start is None:
        return []
    facts: list[str] = []
    for line in lines[start + 1:]:
        match = _FACT_LINE.match(line)
        if not match:
            break
        facts.append(match.group(1))
    return facts


def _name_and_category(instruction: str) -> tuple[str, str]:
    match = _PRODUCT_LINE.search(instruction)
    if not match:
        return "product", "product"
    return match.group(1), match.group(2) or "product"


def parse_sheet(instruction: str) -> Sheet:
    """What an agent can read off the instruction: each recognized fact line with its value.

    A line is credited to the value its cues name; a line naming no value, or two values of one
    dimension, is left out rather than guessed."""
    name, category = _name_and_category(instruction)
    items = []
    for fact in fact_lines(instruction):
        pair = fact_value(fact)
        if pair is not None:
            items.append(SheetItem(pair[0], pair[1], fact))
    return Sheet(name, category, tuple(items))


@functools.lru_cache(maxsize=4096)
def fact_value(fact: str) -> tuple[str, str] | None:
    """(attribute, value) a sheet line states, if exactly one. Cached: phrasings repeat across tasks."""
    pairs = {(hit.attribute, hit.value) for hit in find_cues(fact) if not hit.negated}
    return next(iter(pairs)) if len(pairs) == 1 else None


def task_sheet(task: Task) -> Sheet:
    """The grader's sheet: values from `evaluator.metadata.product`, wording from the instruction."""
    product: Mapping[str, JSON] = task.evaluator.metadata.get("product") or {}
    dims = [dim for dim in ATTRIBUTES if str(product.get(dim, "")) in ATTRIBUTES[dim]]
    facts = fact_lines(task.instruction)
    if len(facts) != len(dims):
        facts = [LABELS[(dim, str(product[dim]))] for dim in dims]
    items = tuple(SheetItem(dim, str(product[dim]), fact) for dim, fact in zip(dims, facts, strict=True))
    name, category = _name_and_category(task.instruction)
    return Sheet(str(product.get("name", name)), str(product.get("category", category)), items)

"""Write a 40-80 word pitch that states exactly the chosen sheet facts and nothing else.

One sentence per chosen fact, an opening that names the product, and mood sentences that assert
nothing to reach 40 words. When the chosen facts do not fit in 80 words the least valued go first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simulators.domains.pitch.attributes import rule_id
from simulators.domains.pitch.sheet import Sheet, SheetItem
from simulators.domains.pitch.wording import FILLERS, OPENINGS, PITCH_SENTENCES

__all__ = ["MAX_WORDS", "MIN_WORDS", "compose_pitch", "liked_items"]

MIN_WORDS, MAX_WORDS = 40, 80


def liked_items(sheet: Sheet, weights: Mapping[str, float]) -> list[SheetItem]:
    """Sheet facts with a positive weight, most valued first (sheet order among equals), trimmed to
    what fits the word budget."""
    liked = [item for item in sheet.items if weights.get(rule_id(item.attribute, item.value), 0) > 0]
    ranked = sorted(liked, key=lambda item: -weights[rule_id(item.attribute, item.value)])
    while ranked and _words(_opening(sheet), ranked) > MAX_WORDS:
        ranked.pop()
    return [item for item in sheet.items if item in ranked]


def compose_pitch(sheet: Sheet, items: Sequence[SheetItem]) -> str:
    sentences = [_opening(sheet), *(PITCH_SENTENCES[(item.attribute, item.value)] for item in items)]
    count = sum(len(s.split()) for s in sentences)
    start = _seed(sheet)
    for step in range(len(FILLERS)):
        if count >= MIN_WORDS:
            break
        filler = FILLERS[(start + step) % len(FILLERS)]
        if count + len(filler.split()) > MAX_WORDS:
            break
        sentences.append(filler)
        count += len(filler.split())
    return " ".join(sentences)


def _opening(sheet: Sheet) -> str:
    return OPENINGS[_seed(sheet) % len(OPENINGS)].format(name=sheet.name, category=sheet.category)


def _words(opening: str, items: Sequence[SheetItem]) -> int:
    return len(opening.split()) + sum(len(PITCH_SENTENCES[(i.attribute, i.value)].split()) for i in items)


def _seed(sheet: Sheet) -> int:
    """A stable per-product choice of wording (never Python's randomized str hash)."""
    return sum(ord(ch) for ch in sheet.name)

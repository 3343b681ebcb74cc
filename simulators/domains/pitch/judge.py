"""The offline pitch judge, and the request every judge (offline or LLM) is asked.

`LexiconJudge` is deterministic. For each sheet item it reads which value the sheet states, then
labels the item
- `contradicted` when the pitch asserts another value of that attribute, or denies the stated one
  ("not mass-produced" against a factory-made sheet);
- `mentioned` when the pitch asserts the stated value;
- `not_addressed` otherwise.
Invented claims are assertions about an attribute the sheet does not carry (an L1 sheet has no
warranty line, so "easy returns" is made up) and concrete claims no attribute covers (specs, awards,
shipping, discounts). The product's own name and category are never claims.
"""

from __future__ import annotations

import functools
import re

from simulators.domain import JudgeItem, JudgeRequest, JudgeVerdict
from simulators.domains.pitch.lexicon import CueHit, find_claims, find_cues
from simulators.domains.pitch.rubric import CONTRADICTED, MENTIONED, NOT_ADDRESSED
from simulators.domains.pitch.sheet import Sheet, task_sheet
from simulators.protocol import Task

__all__ = ["LEXICON_JUDGE", "LexiconJudge", "judge_request", "label_pitch", "sheet_request"]

_PRODUCT = re.compile(r"^(.*?)\s*(?:\((.*)\))?$")
_STOPWORDS = frozenset({"with", "from", "only", "that", "this", "than", "rather", "already", "have", "been"})


def judge_request(task: Task, pitch: str) -> JudgeRequest:
    """What a judge sees for one task: the sheet's product line and facts, and the pitch. Never the
    customer profile: labels are about what the pitch says, the weights come afterwards."""
    return sheet_request(task_sheet(task), pitch)


def sheet_request(sheet: Sheet, pitch: str) -> JudgeRequest:
    items = tuple(JudgeItem(item.attribute, item.fact) for item in sheet.items)
    return JudgeRequest(product=f"{sheet.name} ({sheet.category})", items=items, pitch=pitch)


class LexiconJudge:
    """The deterministic default judge (no model call)."""

    name = "lexicon"

    async def assess(self, request: JudgeRequest) -> JudgeVerdict:
        return label_pitch(request)


LEXICON_JUDGE = LexiconJudge()


def label_pitch(request: JudgeRequest) -> JudgeVerdict:
    pitch = _without_product(request.pitch, request.product)
    hits = find_cues(pitch)
    labels = {item.attribute: _label(item, hits, pitch) for item in request.items}
    on_sheet = set(labels)
    invented: list[str] = []
    for hit in hits:
        if hit.attribute not in on_sheet and hit.text not in invented:
            invented.append(hit.text)
            on_sheet.add(hit.attribute)  # one claim per missing attribute, however often repeated
    invented.extend(claim for claim in find_claims(pitch) if claim not in invented)
    return JudgeVerdict(labels=labels, invented_claims=tuple(invented), judge=LexiconJudge.name)


def _label(item: JudgeItem, hits: list[CueHit], pitch: str) -> str:
    stated = _stated_value(item)
    if stated is None:
        return _label_by_words(item.fact, pitch)
    mine = [hit for hit in hits if hit.attribute == item.attribute]
    if any((hit.value != stated) != hit.negated for hit in mine):  # another value, or the stated one denied
        return CONTRADICTED
    if any(hit.value == stated for hit in mine):
        return MENTIONED
    return NOT_ADDRESSED


def _stated_value(item: JudgeItem) -> str | None:
    return stated_value(item.attribute, item.fact)


@functools.lru_cache(maxsize=4096)
def stated_value(attribute: str, fact: str) -> str | None:
    """The value of `attribute` a sheet line states, or None when it names none or several. Cached:
    sheets reuse a few dozen phrasings, and this runs for every item of every graded pitch."""
    values = {hit.value for hit in find_cues(fact) if hit.attribute == attribute and not hit.negated}
    return next(iter(values)) if len(values) == 1 else None


def _label_by_words(fact: str, pitch: str) -> str:
    """Fallback for a fact the lexicon cannot read: mentioned when most of its content words appear."""
    words = {w for w in re.findall(r"[a-z]+", fact.lower()) if len(w) > 3 and w not in _STOPWORDS}
    if not words:
        return NOT_ADDRESSED
    present = sum(1 for w in words if re.search(rf"\b{w}\b", pitch.lower()))
    return MENTIONED if present * 5 >= len(words) * 3 else NOT_ADDRESSED


def _without_product(pitch: str, product: str) -> str:
    """The pitch with the product's name and category blanked out (they may contain cue words)."""
    match = _PRODUCT.match(product.strip())
    for part in (match.groups() if match else ()):
        if part:
            pitch = re.sub(rf"(?<!\w){re.escape(part)}(?!\w)", " ", pitch, flags=re.IGNORECASE)
    return pitch

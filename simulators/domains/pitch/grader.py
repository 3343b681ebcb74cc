"""Grade a pitch: the judge labels the sheet items, the rubric weighs them with the hidden profile.

The judge is pluggable (an LLM judge from the runner, or the offline `LexiconJudge` by default);
`Grade.judge` names the one that scored. Details keep the labels, the invented claims, the weights
and the score breakdown, so a surprising reward can be explained after the fact.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domain import Grade, Judge
from simulators.domains.pitch.attributes import rule_id
from simulators.domains.pitch.judge import LEXICON_JUDGE, sheet_request
from simulators.domains.pitch.profiles import task_weights
from simulators.domains.pitch.rubric import score_verdict, word_count
from simulators.domains.pitch.sheet import Sheet, task_sheet
from simulators.protocol import JSON, Task

__all__ = ["attribute_weights", "grade_pitch"]


def attribute_weights(task: Task, sheet: Sheet | None = None) -> dict[str, int]:
    """Sheet attribute -> the customer's weight for the value the sheet states."""
    rules = task_weights(task)
    sheet = sheet or task_sheet(task)
    return {item.attribute: rules.get(rule_id(item.attribute, item.value), 0) for item in sheet.items}


async def grade_pitch(task: Task, finish_arguments: Mapping[str, JSON] | None, judge: Judge | None) -> Grade:
    judge = judge or LEXICON_JUDGE
    if finish_arguments is None:
        return Grade(0.0, judge.name, {"reason": "the episode ended without a valid finish"})
    pitch = str(finish_arguments.get("pitch") or "").strip()
    if not pitch:
        return Grade(0.0, judge.name, {"reason": "empty pitch", "word_count": 0})
    sheet = task_sheet(task)
    verdict = await judge.assess(sheet_request(sheet, pitch))
    weights = attribute_weights(task, sheet)
    result = score_verdict(weights, verdict, word_count(pitch))
    details: dict[str, JSON] = {
        **result.as_details(),
        "labels": dict(verdict.labels),
        "invented_claims": list(verdict.invented_claims),
        "weights": weights,
        "customer_key": task.evaluator.metadata.get("customer_key"),
    }
    return Grade(result.score / 100.0, verdict.judge, details)

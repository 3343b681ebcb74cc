"""Grade a pitch: the judge labels the sheet items, the rubric weighs them with the hidden profile.

The hidden profile comes from the task itself when it carries one (`evaluator.metadata.profile`,
the built-in suite), else from the prose Oracle bulletin of the task's window (`taste`, a dataset in
the public export's layout, which ships no weights).

The judge is pluggable (an LLM judge from the runner, or the offline `LexiconJudge` by default);
`Grade.judge` names the one that scored. Details keep the labels, the invented claims, the weights
and the score breakdown, so a surprising reward can be explained after the fact.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domain import Grade, Judge
from simulators.domains.pitch.attributes import rule_id
from simulators.domains.pitch.judge import LEXICON_JUDGE, sheet_request
from simulators.domains.pitch.rubric import score_verdict, word_count
from simulators.domains.pitch.sheet import Sheet, task_sheet
from simulators.domains.pitch.taste import bulletin_weights
from simulators.protocol import JSON, ScenarioEnvironment, Task

__all__ = ["attribute_weights", "grade_pitch", "task_weights"]


def task_weights(environment: ScenarioEnvironment, task: Task, sheet: Sheet | None = None) -> dict[str, int]:
    """The hidden profile by rule id: `evaluator.metadata.profile` when present, else the weights the
    window's bulletin gives the values on this task's sheet (`taste.bulletin_weights`)."""
    profile = task.evaluator.metadata.get("profile")
    if isinstance(profile, Mapping):
        return {str(rule): int(weight) for rule, weight in profile.items()}
    return bulletin_weights(environment, task, sheet or task_sheet(task))


def attribute_weights(environment: ScenarioEnvironment, task: Task, sheet: Sheet | None = None) -> dict[str, int]:
    """Sheet attribute -> the customer's weight for the value the sheet states."""
    sheet = sheet or task_sheet(task)
    rules = task_weights(environment, task, sheet)
    return {item.attribute: rules.get(rule_id(item.attribute, item.value), 0) for item in sheet.items}


async def grade_pitch(environment: ScenarioEnvironment, task: Task, finish_arguments: Mapping[str, JSON] | None,
                      judge: Judge | None) -> Grade:
    judge = judge or LEXICON_JUDGE
    if finish_arguments is None:
        return Grade(0.0, judge.name, {"reason": "the episode ended without a valid finish"})
    pitch = str(finish_arguments.get("pitch") or "").strip()
    if not pitch:
        return Grade(0.0, judge.name, {"reason": "empty pitch", "word_count": 0})
    sheet = task_sheet(task)
    weights = attribute_weights(environment, task, sheet)
    verdict = await judge.assess(sheet_request(sheet, pitch))
    result = score_verdict(weights, verdict, word_count(pitch))
    details: dict[str, JSON] = {
        **result.as_details(),
        "labels": dict(verdict.labels),
        "invented_claims": list(verdict.invented_claims),
        "weights": weights,
        "weights_from": "profile" if isinstance(task.evaluator.metadata.get("profile"), Mapping) else "bulletin",
        "customer_key": task.evaluator.metadata.get("customer_key"),
    }
    return Grade(result.score / 100.0, verdict.judge, details)

"""Re-grade a journaled episode from what it recorded, without a model.

The record holds every tool call the agent made, in order, and its finish arguments. Replaying those
calls through a fresh `ToolSession` on a fresh world rebuilds the final world exactly (the same calls
are refused, the same budget applies), and the domain's grader scores it again. Pitches judged by the
offline lexicon judge are judged again; pitches an LLM judge scored are re-scored from the judge's
journaled labels (the rubric and weights are recomputed, the judge's reading is taken as recorded),
so no model is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domain import Domain, Judge, JudgeRequest, JudgeVerdict
from simulators.protocol import JSON, ScenarioEnvironment, Task, ToolCall
from simulators.record import EpisodeRecord
from simulators.session import ToolSession

__all__ = ["OFFLINE_JUDGES", "RecordedJudge", "Regrade", "regrade", "rewards_match"]

OFFLINE_JUDGES = ("replay", "lexicon")
"""Graders that run again as they ran: replay (retail, banking) and the pitch lexicon judge."""
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Regrade:
    stored: float
    regraded: float
    judge: str
    """How it was re-graded: the grader's own name, or `recorded:<judge>` for a replayed verdict."""

    @property
    def matches(self) -> bool:
        return rewards_match(self.stored, self.regraded)


def rewards_match(stored: float, regraded: float) -> bool:
    return abs(stored - regraded) <= TOLERANCE


class RecordedJudge:
    """A judge that answers with the verdict an LLM judge gave when the episode ran."""

    def __init__(self, name: str, details: Mapping[str, JSON]) -> None:
        self.name = name
        self._labels = {str(k): str(v) for k, v in dict(details.get("labels") or {}).items()}
        self._invented = tuple(str(claim) for claim in details.get("invented_claims") or ())

    async def assess(self, request: JudgeRequest) -> JudgeVerdict:
        return JudgeVerdict(labels=self._labels, invented_claims=self._invented, judge=self.name)


async def regrade(domain: Domain, environment: ScenarioEnvironment, task: Task, record: EpisodeRecord,
                  stored_reward: float, stored_judge: str, grade_details: Mapping[str, JSON]) -> Regrade:
    session = ToolSession(environment, domain.new_world(environment, task))
    for number, step in enumerate(record.steps):
        if step.action_name is not None:
            session.execute(ToolCall(id=f"regrade-{number}", name=step.action_name, arguments=step.action_arguments))
    judge: Judge | None = None
    how = stored_judge
    if stored_judge not in OFFLINE_JUDGES:
        judge = RecordedJudge(stored_judge, grade_details)
        how = f"recorded:{stored_judge}"
    grade = await domain.grade(environment, task, session.world, record.finish_arguments, judge)
    return Regrade(stored=stored_reward, regraded=grade.reward, judge=how)

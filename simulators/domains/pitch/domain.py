"""The pitch domain object: ties world, grader, generator and planner to the `Domain` protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simulators.domain import AuditView, DomainWorld, Grade, Judge, PlannedCall, ToolExchange
from simulators.domains.pitch.generator import generate_scenario
from simulators.domains.pitch.grader import grade_pitch
from simulators.domains.pitch.planner import next_call
from simulators.domains.pitch.world import PitchWorld
from simulators.protocol import JSON, Scenario, ScenarioEnvironment, Task

__all__ = ["PitchDomain"]


class PitchDomain:
    name = "pitch"

    def new_world(self, environment: ScenarioEnvironment, task: Task) -> DomainWorld:
        return PitchWorld(task.task_id)

    async def grade(
        self,
        environment: ScenarioEnvironment,
        task: Task,
        world: DomainWorld,
        finish_arguments: Mapping[str, JSON] | None,
        judge: Judge | None,
    ) -> Grade:
        return await grade_pitch(environment, task, finish_arguments, judge)

    def generate(self, scenario: str, seed: int) -> Scenario:
        return generate_scenario(scenario, seed)

    def next_call(
        self, instruction: str, policy: Mapping[str, JSON], history: Sequence[ToolExchange]
    ) -> PlannedCall:
        return next_call(instruction, policy, history)

    def audit_view(self, environment: ScenarioEnvironment, task: Task) -> AuditView | None:
        return None  # a pitch changes no world: nothing to audit

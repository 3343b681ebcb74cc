"""The banking domain object: the `simulators.domain.Domain` protocol over this package's parts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simulators.domain import AuditView, DomainWorld, Grade, Judge, PlannedCall, ToolExchange
from simulators.domains.banking import grader, planner, world
from simulators.domains.banking.generator import generate_scenario
from simulators.protocol import JSON, Scenario, ScenarioEnvironment, Task

__all__ = ["BankingDomain"]


class BankingDomain:
    name = "banking"

    def new_world(self, environment: ScenarioEnvironment, task: Task) -> DomainWorld:
        return world.new_world(environment, task)

    async def grade(
        self,
        environment: ScenarioEnvironment,
        task: Task,
        world: DomainWorld,
        finish_arguments: Mapping[str, JSON] | None,
        judge: Judge | None,
    ) -> Grade:
        return grader.grade(environment, task, world, finish_arguments)

    def generate(self, scenario: str, seed: int) -> Scenario:
        return generate_scenario(scenario, seed)

    def next_call(
        self, instruction: str, policy: Mapping[str, JSON], history: Sequence[ToolExchange]
    ) -> PlannedCall:
        return planner.next_call(instruction, policy, history)

    def audit_view(self, environment: ScenarioEnvironment, task: Task) -> AuditView | None:
        case_id = world.episode_case_id(environment, task)
        return AuditView(write_tools=planner.DECISION_TOOLS, escalation_tools=frozenset({"escalate_case"}),
                         own=frozenset({("cases", case_id)} if case_id else set()), initial=environment.world)

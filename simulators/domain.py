"""What a domain (retail, banking, pitch) provides to the rest of the benchmark.

A domain is registered explicitly in `simulators.registry`. It supplies:
- a world for one episode (`new_world`): a fresh deep copy of the scenario's initial state, scoped
  to the task's own order or case, with the domain's tools;
- a grader (`grade`): the final world and finish arguments -> a `Grade`;
- a generator for the built-in suite (`generate`);
- a planner for the scripted offline agent (`next_call`);
- what the state audits need to know (`audit_view`): which tools write, which escalate, and which
  records are the episode's own (None for a domain without a world state, pitch).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from simulators.protocol import JSON, Scenario, ScenarioEnvironment, Task

__all__ = [
    "AuditView",
    "Domain",
    "DomainWorld",
    "GeneratedScenario",
    "Grade",
    "Judge",
    "JudgeItem",
    "JudgeRequest",
    "JudgeVerdict",
    "PlannedCall",
    "ToolExchange",
]


class DomainWorld(Protocol):
    """Domain state and tools for one episode."""

    def call(self, name: str, arguments: Mapping[str, JSON]) -> str:
        """Run a domain tool (arguments already checked against its schema) and return the
        observation text. Raise `simulators.errors.ToolError` for a refusal the model should see."""
        ...

    def snapshot(self) -> JSON:
        """The state the grader hashes (a deep copy, safe to keep)."""
        ...


@dataclass(frozen=True)
class Grade:
    reward: float
    """0.0 .. 1.0"""
    judge: str
    """Who scored it: `replay` for retail/banking, the judge's name for pitch."""
    details: Mapping[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeItem:
    attribute: str
    fact: str


@dataclass(frozen=True)
class JudgeRequest:
    """What a pitch judge sees: the product sheet's facts and the pitch. Never the profile."""

    product: str
    items: tuple[JudgeItem, ...]
    pitch: str


@dataclass(frozen=True)
class JudgeVerdict:
    labels: Mapping[str, str]
    """attribute -> `mentioned` | `contradicted` | `not_addressed`"""
    invented_claims: tuple[str, ...]
    judge: str


class Judge(Protocol):
    """Labels pitch rubric items. The offline default is deterministic; an LLM judge plugs in from the
    runner through its model client."""

    name: str

    async def assess(self, request: JudgeRequest) -> JudgeVerdict: ...


@dataclass(frozen=True)
class ToolExchange:
    """One executed call seen by a scripted planner: the call and what came back."""

    name: str
    arguments: Mapping[str, JSON]
    observation: str


@dataclass(frozen=True)
class PlannedCall:
    name: str
    arguments: Mapping[str, JSON]
    thought: str = ""


@dataclass(frozen=True)
class AuditView:
    """What `simulators.audit` needs of a domain to audit one episode's world.

    A snapshot is a mapping of tables (`orders`, `users`, `cases` ...) to records by id; a table that
    is not such a mapping (a log) is compared as a whole by the exact state check only."""

    write_tools: frozenset[str]
    """Tools that can change the world (a decision counts as a write)."""
    escalation_tools: frozenset[str]
    """Tools that hand the episode to a human (a subset of `write_tools`, possibly empty)."""
    own: frozenset[tuple[str, str]]
    """(table, record id) of the episode's own records: its order and customer, or its case."""
    initial: Mapping[str, JSON]
    """The scenario's initial world: `state_unchanged` compares every other record with it."""
    owner: tuple[str, str] | None = None
    """(field, value): a record the episode created is its own when `record[field] == value`."""


@dataclass(frozen=True)
class GeneratedScenario:
    """A built-in scenario before it is written to disk."""

    scenario: Scenario


class Domain(Protocol):
    name: str

    def new_world(self, environment: ScenarioEnvironment, task: Task) -> DomainWorld: ...

    async def grade(
        self,
        environment: ScenarioEnvironment,
        task: Task,
        world: DomainWorld,
        finish_arguments: Mapping[str, JSON] | None,
        judge: Judge | None,
    ) -> Grade:
        """`finish_arguments` is None when the episode ended without a valid finish."""
        ...

    def generate(self, scenario: str, seed: int) -> Scenario:
        """The built-in scenario: deterministic in (scenario, seed)."""
        ...

    def next_call(
        self, instruction: str, policy: Mapping[str, JSON], history: Sequence[ToolExchange]
    ) -> PlannedCall:
        """The scripted agent's next call. `policy` is the documented policy overlaid with any
        policy block of the system prompt; `history` holds the calls executed so far (the
        documents already read). Deterministic; must end with `finish`."""
        ...

    def audit_view(self, environment: ScenarioEnvironment, task: Task) -> AuditView | None:
        """The episode's scope and write tools for the state audits; None: nothing to audit."""
        ...

"""The benchmark's protocol types: tasks, scenarios, tool calls, conversation turns.

They live at the bottom of the import graph (runner -> methods -> simulators) because they are what
every layer speaks. Everything here is a plain frozen dataclass; validation happens where data enters
(`simulators.dataset`), not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "JSON",
    "Action",
    "AssistantTurn",
    "Evaluator",
    "Message",
    "Scenario",
    "ScenarioEnvironment",
    "Task",
    "TaskView",
    "ToolCall",
    "Window",
    "DOMAINS",
    "SCENARIOS",
]

JSON = Any
"""A value that round-trips through JSON (dict, list, str, int, float, bool, None)."""

DOMAINS: tuple[str, ...] = ("retail", "banking", "pitch")
SCENARIOS: tuple[str, ...] = tuple(f"{d}_l{level}" for d in DOMAINS for level in (1, 2, 3))

Split = Literal["serving", "test"]
Category = Literal["hidden", "fully_specified"]


@dataclass(frozen=True)
class Action:
    """One gold tool call of an evaluator: replayed on a fresh world by the grader."""

    name: str
    kwargs: Mapping[str, JSON]


@dataclass(frozen=True)
class Evaluator:
    """Scoring-only information. Never reaches an agent or a learning method."""

    slice: str
    family: str
    actions: tuple[Action, ...]
    answer: JSON
    metadata: Mapping[str, JSON]


@dataclass(frozen=True)
class Task:
    """One line of `data/<scenario>/{serving,test}.jsonl`."""

    task_id: str
    scenario: str
    domain: str
    tier: str
    split: Split
    window: int
    timestamp: int
    category: Category
    instruction: str
    evaluator: Evaluator

    def view(self) -> TaskView:
        """What an agent or a method may see of this task."""
        return TaskView(
            task_id=self.task_id,
            scenario=self.scenario,
            domain=self.domain,
            tier=self.tier,
            timestamp=self.timestamp,
            instruction=self.instruction,
        )


@dataclass(frozen=True)
class TaskView:
    """A task with everything hidden removed: no evaluator, category, window or split."""

    task_id: str
    scenario: str
    domain: str
    tier: str
    timestamp: int
    instruction: str


@dataclass(frozen=True)
class Window:
    """One row of the hidden `windows.json`."""

    window: int
    first_position: int
    oracle_bulletin: str


@dataclass(frozen=True)
class ScenarioEnvironment:
    """The files of `environments/<scenario>/`."""

    system_prompt: str
    tools: tuple[Mapping[str, JSON], ...]
    docs: Mapping[str, str]
    """Documents reachable through `read_docs`, by name (`policy`, `workflow`)."""
    world: Mapping[str, JSON]
    windows: tuple[Window, ...]

    def tool_names(self) -> frozenset[str]:
        return frozenset(str(t["function"]["name"]) for t in self.tools)

    def tool_schema(self, name: str) -> Mapping[str, JSON] | None:
        for tool in self.tools:
            if tool["function"]["name"] == name:
                params: Mapping[str, JSON] = tool["function"].get("parameters", {})
                return params
        return None


@dataclass(frozen=True)
class Scenario:
    name: str
    domain: str
    tier: str
    environment: ScenarioEnvironment
    serving: tuple[Task, ...]
    test: tuple[Task, ...]

    def window_of_position(self, position: int) -> Window:
        """The window active at a serving stream position (1-based)."""
        active = self.environment.windows[0]
        for window in self.environment.windows:
            if window.first_position <= position:
                active = window
        return active


@dataclass(frozen=True)
class ToolCall:
    """A call as the model made it. `arguments` is the raw JSON text: it may not parse."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class AssistantTurn:
    """One model response, provider-neutral."""

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    provider_state: JSON = None
    """Opaque provider data to send back on later turns (e.g. thinking-block signatures)."""


@dataclass(frozen=True)
class Message:
    """One conversation message after the system prompt."""

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    provider_state: JSON = field(default=None, compare=False)

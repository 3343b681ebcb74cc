"""Small real stand-ins for tests of the runner: a toy domain, a model that plays a script, a method
that counts what it learned. They implement the same protocols as the real ones; nothing is mocked."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from methods.base import MethodSetup, MethodSpec
from runner.display.progress import RunProgress
from runner.journal import Journal
from runner.models.registry import ModelEntry
from runner.models.stack import ClientStack
from simulators.domain import Grade, Judge, PlannedCall, ToolExchange
from simulators.errors import ToolError
from simulators.model_api import ModelClient, ModelRequest, ModelResponse, Usage
from simulators.protocol import (
    JSON,
    Action,
    AssistantTurn,
    Evaluator,
    Scenario,
    ScenarioEnvironment,
    Task,
    TaskView,
    ToolCall,
    Window,
)
from simulators.record import EpisodeRecord

TOY_TOOLS: tuple[dict[str, JSON], ...] = (
    {"type": "function", "function": {"name": "read_docs", "parameters": {
        "type": "object", "properties": {"doc": {"type": "string"}, "section": {"type": "string"}},
        "required": ["doc"]}}},
    {"type": "function", "function": {"name": "decide", "parameters": {
        "type": "object", "properties": {"case_id": {"type": "string"}, "decision": {"type": "string"}},
        "required": ["case_id", "decision"]}}},
    {"type": "function", "function": {"name": "finish", "parameters": {
        "type": "object", "properties": {}, "required": []}}},
)


class ToyWorld:
    def __init__(self, state: dict[str, JSON], case_id: str) -> None:
        self.state = state
        self.case_id = case_id

    def call(self, name: str, arguments: Mapping[str, JSON]) -> str:
        if arguments["case_id"] != self.case_id:
            raise ToolError("that case is not part of this episode")
        self.state["cases"][self.case_id] = arguments["decision"]
        return "recorded"

    def snapshot(self) -> JSON:
        return copy.deepcopy(self.state)


class ToyDomain:
    """Each task: decide case `c<n>` as `yes` or `no`. The gold decision is in the evaluator."""

    name = "toy"

    def new_world(self, environment: ScenarioEnvironment, task: Task) -> ToyWorld:
        return ToyWorld(copy.deepcopy(dict(environment.world)), str(task.evaluator.metadata["case_id"]))

    async def grade(self, environment: ScenarioEnvironment, task: Task, world: ToyWorld,
                    finish_arguments: Mapping[str, JSON] | None, judge: Judge | None) -> Grade:
        gold = task.evaluator.actions[0].kwargs["decision"]
        ok = finish_arguments is not None and world.state["cases"][world.case_id] == gold
        return Grade(reward=1.0 if ok else 0.0, judge="replay")

    def generate(self, scenario: str, seed: int) -> Scenario:
        return toy_scenario(name=scenario)

    def audit_view(self, environment: ScenarioEnvironment, task: Task) -> None:
        return None

    def next_call(self, instruction: str, policy: Mapping[str, JSON],
                  history: Sequence[ToolExchange]) -> PlannedCall:
        case_id = instruction.rsplit(" ", 1)[-1].rstrip(".")
        if any(h.name == "decide" for h in history):
            return PlannedCall("finish", {})
        return PlannedCall("decide", {"case_id": case_id, "decision": str(policy.get("decision", "yes"))})


def toy_scenario(windows: int = 3, serving_per_window: int = 4, test_per_window: int = 3,
                 name: str = "toy_l1") -> Scenario:
    """Gold decision flips each window: `yes` in even windows, `no` in odd ones."""
    serving: list[Task] = []
    test: list[Task] = []
    rows: list[Window] = []
    cases: dict[str, JSON] = {}
    position = 0
    for w in range(windows):
        rows.append(Window(w, position + 1, f"window {w}: decide {'yes' if w % 2 == 0 else 'no'}"))
        for i in range(serving_per_window):
            position += 1
            serving.append(_toy_task(name, f"s{w}-{i}", "serving", w, position))
        for i in range(test_per_window):
            test.append(_toy_task(name, f"t{w}-{i}", "test", w, position, hidden=i % 2 == 0))
    for task in serving + test:
        cases[task.evaluator.metadata["case_id"]] = None
    docs = {"policy": "# Policy\nDecide yes.", "workflow": "# Workflow\nDecide, then finish."}
    environment = ScenarioEnvironment(system_prompt="You decide cases.", tools=TOY_TOOLS, docs=docs,
                                      world={"cases": cases}, windows=tuple(rows))
    return Scenario(name, "toy", "L1", environment, tuple(serving), tuple(test))


def _toy_task(scenario: str, task_id: str, split: str, window: int, position: int, hidden: bool = True) -> Task:
    decision = "yes" if window % 2 == 0 else "no"
    evaluator = Evaluator("adapt" if hidden else "general", "toy",
                          (Action("decide", {"case_id": f"c-{task_id}", "decision": decision}),), None,
                          {"case_id": f"c-{task_id}"})
    return Task(task_id, scenario, "toy", "L1", split, window, position,  # type: ignore[arg-type]
                "hidden" if hidden else "fully_specified",
                f"Current timestamp: {position}\n\nDecide case c-{task_id}.", evaluator)


Responder = Callable[[ModelRequest], Awaitable[AssistantTurn]]


@dataclass
class ScriptModel:
    """A model that answers from a function of the request; records every request it saw."""

    respond_with: Responder
    name: str = "script"
    requests: list[ModelRequest] = field(default_factory=list)
    usage: Usage = Usage(input_tokens=10, output_tokens=5)
    cost_usd: float = 0.0

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(await self.respond_with(request), self.usage, self.cost_usd)


def call(name: str, arguments: Mapping[str, JSON] | str, call_id: str = "c1") -> ToolCall:
    raw = arguments if isinstance(arguments, str) else orjson.dumps(dict(arguments)).decode()
    return ToolCall(call_id, name, raw)


def toy_decider(choose: Callable[[ModelRequest], str]) -> Responder:
    """Plays the toy domain: decide the case in the instruction with `choose(request)`, then finish."""

    async def respond(request: ModelRequest) -> AssistantTurn:
        if request.messages[-1].role == "tool":
            return AssistantTurn(tool_calls=(call("finish", {}, f"f{len(request.messages)}"),))
        case_id = request.messages[0].content.rsplit(" ", 1)[-1].rstrip(".")
        return AssistantTurn(tool_calls=(call("decide", {"case_id": case_id, "decision": choose(request)}),))

    return respond


class CountingMethod:
    """Learns the count of records it saw and the last decision that scored; shows both as context."""

    def __init__(self) -> None:
        self.seen = 0
        self.learn_sizes: list[int] = []
        self.best = "yes"

    def context(self, task: TaskView) -> str:
        return f"seen={self.seen} best={self.best}"

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        self.learn_sizes.append(len(records))
        self.seen += len(records)
        for record in records:
            decided = orjson.loads(record.steps[0].action_arguments)["decision"]
            self.best = decided if record.reward == 1.0 else ("no" if decided == "yes" else "yes")

    def state(self) -> JSON:
        return {"seen": self.seen, "best": self.best}

    def load(self, state: JSON) -> None:
        self.seen, self.best = state["seen"], state["best"]


def counting_spec(instances: list[CountingMethod] | None = None) -> MethodSpec:
    def build(setup: MethodSetup) -> CountingMethod:
        method = CountingMethod()
        if instances is not None:
            instances.append(method)
        return method

    return MethodSpec("counting", "test method", uses_model=False, build=build)


def offline_clients(journal: Journal, progress: RunProgress, model: ModelClient, concurrency: int = 8) -> ClientStack:
    """A client stack serving one free in-process model under the name `script`."""
    return ClientStack(run_id=progress.run_id, journal=journal, progress=progress,
                       models={"script": ModelEntry("script", model, offline=True)}, prices={"script": None},
                       budget=None, concurrency=concurrency, model_concurrency=concurrency)

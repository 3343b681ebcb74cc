"""The one small interface every learning method implements.

A method turns what it has learned into text appended to the acting agent's system prompt
(`context`), learns from finished serving episodes (`learn`), and saves and restores its state as JSON
(`state` / `load`) so the journal can checkpoint it and test sets can run against a frozen snapshot.
A method without JSON state (the reference's interface through `methods.slb`) says so in its spec
(`snapshot = "copy"`): its test sets then get a deep copy, and a resume replays `learn` from the start.

What a method may see is the protocol's business (FORMAT.md): a `TaskView` (no evaluator, category,
window or split) and `EpisodeRecord`s ending in their `Score: n/100.` line. Model calls go only
through the `ModelClient` the runner hands in, so they are rate-limited, budgeted and journaled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from methods.options import MethodOption
from simulators.model_api import ModelClient
from simulators.protocol import JSON, Scenario, Task, TaskView
from simulators.record import EpisodeRecord

__all__ = ["BulletinLookup", "Labelled", "Method", "MethodSetup", "MethodSpec", "NonLearning", "PublicScenario",
           "context_for"]

BulletinLookup = Callable[[int], str]
"""Stream position -> the active window's Oracle bulletin. Handed to the oracle method only."""


class Method(Protocol):
    def context(self, task: TaskView) -> str:
        """Text appended to the system prompt for this task. Must not depend on phase or window."""
        ...

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        """Learn from serving episodes, in stream order (one at block size 1)."""
        ...

    def state(self) -> JSON:
        """JSON-serializable, deterministic: `load(state())` gives a method with identical behaviour."""
        ...

    def load(self, state: JSON) -> None: ...


@runtime_checkable
class Labelled(Protocol):
    """A method whose context is asked with the phase and window labels, as the reference's interface
    asks it (`context(task, phase, window)`). Only the adapter is one; the labels are bookkeeping, and
    `shiftbench methods check` fails a method whose context changes with them."""

    def labelled_context(self, task: TaskView, phase: str, window: int) -> str: ...


def context_for(method: Method, task: Task) -> str:
    """The context for `task` as the runner asks it: the task view, with the labels only for `Labelled`."""
    if isinstance(method, Labelled):
        return method.labelled_context(task.view(), task.split, task.window)
    return method.context(task.view())


@dataclass(frozen=True)
class PublicScenario:
    """What anyone may read of a scenario: the agent's system prompt, its documents and its tools.
    No world, no windows, no bulletins, no tasks."""

    name: str
    domain: str
    tier: str
    system_prompt: str
    documents: Mapping[str, str]
    tools: tuple[Mapping[str, JSON], ...]

    @classmethod
    def of(cls, scenario: Scenario) -> PublicScenario:
        env = scenario.environment
        return cls(scenario.name, scenario.domain, scenario.tier, env.system_prompt, dict(env.docs), env.tools)


@dataclass(frozen=True)
class MethodSetup:
    """What the runner hands a method when it builds one."""

    scenario: str
    domain: str
    client: ModelClient | None = None
    """For methods that call a model; None for the others."""
    bulletins: BulletinLookup | None = None
    """Only for methods whose spec says `sees_bulletin` (Oracle, by design)."""
    public: PublicScenario | None = None
    """The scenario's public face (system prompt, documents, tools)."""
    options: Mapping[str, JSON] = field(default_factory=dict)
    """The spec's declared options, checked, defaults filled in (`methods.options`)."""


@dataclass(frozen=True)
class MethodSpec:
    name: str
    summary: str
    uses_model: bool
    build: Callable[[MethodSetup], Method]
    learns: bool = True
    """False for methods whose state never changes: the runner then skips their serving stream,
    as the reference runner does, since its episodes could not change a single test result."""
    sees_bulletin: bool = False
    describe: Callable[[JSON], str] | None = None
    """A saved state (what `state()` returned) as a person reads it, for `shiftbench state`: what the
    method has learned and what it writes into the agent's prompt; "" when it has learned nothing yet.
    None: the state is shown as stored."""
    options: tuple[MethodOption, ...] = ()
    """What a sweep file's `[methods.NAME.options]` may set; the builder gets them in `MethodSetup.options`."""
    block_size: int | None = None
    """Serving episodes between two `learn` calls; None: the sweep's `block_size`. Set from the
    `block_size` option when a spec declares one (`methods.spec.configure`)."""
    snapshot: Literal["state", "copy"] = "state"
    """"state": `state()` is JSON and `load(state())` restores it (checkpoints, frozen test sets). "copy":
    no JSON state; test sets get a deep copy and a resume replays `learn` on every journaled block."""


class NonLearning:
    """The learning half of a method that never learns: nothing to learn, nothing to save."""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        return None

    def state(self) -> JSON:
        return {}

    def load(self, state: JSON) -> None:
        return None

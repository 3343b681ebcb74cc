"""The one small interface every learning method implements.

A method turns what it has learned into text appended to the acting agent's system prompt
(`context`), learns from finished serving episodes (`learn`), and saves and restores its state as JSON
(`state` / `load`) so the journal can checkpoint it and test sets can run against a frozen snapshot.

What a method may see is the protocol's business (FORMAT.md): a `TaskView` (no evaluator, category,
window or split) and `EpisodeRecord`s ending in their `Score: n/100.` line. Model calls go only
through the `ModelClient` the runner hands in, so they are rate-limited, budgeted and journaled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from simulators.model_api import ModelClient
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["BulletinLookup", "Method", "MethodSetup", "MethodSpec", "NonLearning"]

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


@dataclass(frozen=True)
class MethodSetup:
    """What the runner hands a method when it builds one."""

    scenario: str
    domain: str
    client: ModelClient | None = None
    """For methods that call a model; None for the others."""
    bulletins: BulletinLookup | None = None
    """Only for methods whose spec says `sees_bulletin` (Oracle, by design)."""


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


class NonLearning:
    """The learning half of a method that never learns: nothing to learn, nothing to save."""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        return None

    def state(self) -> JSON:
        return {}

    def load(self, state: JSON) -> None:
        return None

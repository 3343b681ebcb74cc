"""tabular: learns the hidden policy from the Score line alone, and writes it as a policy block.

No model calls. Per domain an adapter (`retail`, `banking`, `pitch`) reads each serving episode's
instruction, its own tool calls and JSON observations, the decision the agent took and the score, and
keeps aggregated statistics per decision family and observable features: which decision and reason
scored, where numeric boundaries lie, what a customer weighs. Where the current belief fails, the next
task with the same features tries an untried alternative (the score is the only feedback, so exploring
is how the right decision is found); newer evidence outweighs older, so a belief that starts failing is
re-opened (drift, reversals, re-entry).

The context is ONE fenced policy block in the domain's rule schema (see the domain package
docstrings): rules that override the documented ones, including documented rules switched off where
the evidence says they no longer hold. Only rules whose learned behaviour differs from the documents
are written, so fully specified tasks keep the documented behaviour. An empty belief writes nothing.

It shows, offline with the scripted agent (which overlays every policy block in its system prompt),
that the hidden policies can be learned from the feedback the protocol gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from methods.base import MethodSetup, MethodSpec
from methods.tabular.banking import BankingAdapter
from methods.tabular.describe import beliefs
from methods.tabular.pitch import PitchAdapter
from methods.tabular.retail import RetailAdapter
from simulators.policy_block import render_policy_block
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["HEADER", "TABULAR", "Adapter", "TabularMethod"]

HEADER = ("# Learned policy\n"
          "Learned from the scores of YOUR OWN earlier episodes in this environment. Where it differs from "
          "the documents it describes the practice currently in force: each rule below replaces the "
          "documented rule with the same id.\n\n")


class Adapter(Protocol):
    def learn(self, record: EpisodeRecord) -> None: ...

    def context(self, task: TaskView) -> dict[str, JSON]: ...

    def state(self) -> JSON: ...

    def load(self, state: JSON) -> None: ...


class _Inert:
    """A domain without an adapter: nothing to learn, nothing to write."""

    def learn(self, record: EpisodeRecord) -> None:
        return None

    def context(self, task: TaskView) -> dict[str, JSON]:
        return {}

    def state(self) -> JSON:
        return {}

    def load(self, state: JSON) -> None:
        return None


def _adapter(domain: str) -> Adapter:
    if domain == "retail":
        return RetailAdapter()
    if domain == "banking":
        return BankingAdapter()
    if domain == "pitch":
        return PitchAdapter()
    return _Inert()


class TabularMethod:
    def __init__(self, domain: str) -> None:
        self.domain = domain
        self.adapter = _adapter(domain)

    def context(self, task: TaskView) -> str:
        rules = self.adapter.context(task)
        return HEADER + render_policy_block(rules) + "\n" if rules else ""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        for record in records:
            self.adapter.learn(record)

    def state(self) -> JSON:
        return {"domain": self.domain, "adapter": self.adapter.state()}

    def load(self, state: JSON) -> None:
        self.adapter = _adapter(self.domain)
        self.adapter.load(state.get("adapter", {}))


NEUTRAL_TASK = TaskView(task_id="", scenario="", domain="", tier="", timestamp=0, instruction="")
"""A task with nothing on it: the block written for it is the block every task gets (pitch marks the
values of a task's own product sheet tentative where unsure; no sheet, no marks)."""


def describe_tabular(state: JSON) -> str:
    """Its beliefs (per condition, case kind or product value) and the policy block it writes."""
    method = TabularMethod(str(state.get("domain", "")))
    method.load(state)
    lines = beliefs(method.adapter)
    if not lines:
        return ""
    block = method.context(NEUTRAL_TASK)
    written = ["", "Policy block it writes into the agent's prompt:", block.rstrip()] if block else [
        "", "It writes no policy block: nothing it believes differs from the documents."]
    return "\n".join(["Beliefs:", *(f"  {line}" for line in lines), *written])


def _build(setup: MethodSetup) -> TabularMethod:
    return TabularMethod(setup.domain)


TABULAR = MethodSpec(
    name="tabular",
    summary="Offline learner: per-feature decision tables from the Score line, written as a policy block.",
    uses_model=False, build=_build, describe=describe_tabular,
)

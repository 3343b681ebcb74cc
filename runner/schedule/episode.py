"""Run one episode: the acting agent's loop over a model and a fresh world, then the grade.

The loop is the same for every method (FORMAT.md): one tool call per turn; a turn with several calls
executes none and answers each; a turn with no call gets a corrective user message; every call id gets
exactly one result; `finish` ends the episode once it validates. Budgets: 50 tool calls (in the tool
session), 100 turns (the sweep's `max_turns`), 256k output tokens. A provider failure whose class ends
an episode (context too long, content filtered: runner.providers.taxonomy) ends it like a limit would,
with that end reason, and it is graded as it stands; every other provider failure propagates (never
scored).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from runner.providers.taxonomy import InfrastructureError
from simulators.audit import EpisodeAudit, WatchedWorld, audit_episode
from simulators.domain import Domain, DomainWorld, Grade, Judge
from simulators.model_api import ModelClient, ModelRequest, Usage
from simulators.protocol import AssistantTurn, Message, ScenarioEnvironment, Task, ToolCall
from simulators.record import EpisodeRecord, Step
from simulators.session import ToolSession

__all__ = ["EpisodeLimits", "EpisodeResult", "run_episode", "system_prompt_for"]

NO_CALL_MESSAGE = "No tool call was received. Act with exactly ONE tool call (call `finish` to end the episode)."
"""The harness texts are the public reference's (`servelearnbench/agent.py`), since agents learn from them."""


@dataclass(frozen=True)
class EpisodeLimits:
    max_turns: int = 100
    max_output_tokens: int = 256_000
    max_output_tokens_per_call: int = 16_384


@dataclass(frozen=True)
class EpisodeResult:
    record: EpisodeRecord
    grade: Grade
    usage: Usage
    cost_usd: float
    turns: int
    tool_calls: int
    latency_s: float
    audit: EpisodeAudit | None = None
    """The state audits (retail, banking); None where the domain has no world state to audit."""


def system_prompt_for(environment: ScenarioEnvironment, method_context: str) -> str:
    """The system text an agent reads: the scenario's prompt and documents, then the method's context."""
    return ModelRequest(environment.system_prompt, (), context=method_context).full_system


async def run_episode(
    task: Task,
    environment: ScenarioEnvironment,
    domain: Domain,
    model: ModelClient,
    method_context: str = "",
    judge: Judge | None = None,
    limits: EpisodeLimits = EpisodeLimits(),
    clock: Callable[[], float] = time.monotonic,
) -> EpisodeResult:
    started = clock()
    view = domain.audit_view(environment, task)
    world: DomainWorld = domain.new_world(environment, task)
    watched = WatchedWorld(world, view.write_tools) if view is not None else None
    session = ToolSession(environment, watched or world)
    messages: list[Message] = [Message(role="user", content=task.instruction)]
    steps: list[Step] = []
    usage, cost = Usage(), 0.0
    finish_arguments = None
    end_reason = "turn_limit"
    turns = 0
    while turns < limits.max_turns:
        turns += 1
        remaining = limits.max_output_tokens - usage.output_tokens
        # Stable parts first (tools, the scenario's prompt and documents, the method's context), then
        # the task and the conversation: every turn extends the last one's prefix, and every episode
        # of a stream shares the prefix up to the context until the method learns again.
        request = ModelRequest(
            system=environment.system_prompt, context=method_context, messages=tuple(messages),
            tools=environment.tools, max_output_tokens=min(limits.max_output_tokens_per_call, remaining),
            domain=task.domain,
        )
        try:
            response = await model.respond(request)
        except InfrastructureError as exc:
            if exc.policy.outcome != "end_episode":
                raise
            usage, cost, end_reason = usage + exc.usage, cost + exc.cost_usd, exc.policy.end_reason
            break
        usage, cost = usage + response.usage, cost + response.cost_usd
        turn = response.turn
        messages.append(Message(role="assistant", content=turn.text, reasoning=turn.reasoning,
                                tool_calls=turn.tool_calls, provider_state=turn.provider_state))
        done, finish_arguments = _answer_turn(turn, session, messages, steps)
        if done:
            end_reason = "finished"
            break
        if usage.output_tokens >= limits.max_output_tokens:
            end_reason = "output_token_limit"
            break
    grade = await domain.grade(environment, task, session.world, finish_arguments, judge)
    audit = audit_episode(domain, environment, task, view, watched) if view is not None and watched else None
    record = EpisodeRecord(task=task.view(), position=task.timestamp, steps=tuple(steps),
                           reward=grade.reward, finish_arguments=finish_arguments, end_reason=end_reason)
    return EpisodeResult(record=record, grade=grade, usage=usage, cost_usd=cost, turns=turns,
                         tool_calls=session.calls_used, latency_s=clock() - started, audit=audit)


def _answer_turn(
    turn: AssistantTurn, session: ToolSession, messages: list[Message], steps: list[Step]
) -> tuple[bool, dict[str, object] | None]:
    """Execute (or refuse) the turn's calls, append their results; True when the episode finished."""
    calls = turn.tool_calls
    if not calls:
        messages.append(Message(role="user", content=NO_CALL_MESSAGE))
        steps.append(Step(turn.reasoning, turn.text, None, "", NO_CALL_MESSAGE, "no tool call"))
        return False, None
    if len(calls) > 1:
        why = (f"not executed: {len(calls)} tool calls were received in one turn; only ONE call per turn is "
               "allowed. Nothing was executed — re-issue the calls one per turn.")
        for call in calls:
            messages.append(Message(role="tool", content=why, tool_call_id=call.id))
        steps.append(Step(turn.reasoning, turn.text, None, "", why, f"{len(calls)} calls in one turn",
                          tuple(call.name for call in calls)))
        return False, None
    only: ToolCall = calls[0]
    outcome = session.execute(only)
    messages.append(Message(role="tool", content=outcome.observation, tool_call_id=only.id))
    steps.append(Step(turn.reasoning, turn.text, only.name, only.arguments, outcome.observation))
    if outcome.finished:
        return True, dict(outcome.finish_arguments or {})
    return False, None

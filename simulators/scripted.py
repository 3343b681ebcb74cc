"""Scripted offline agents: deterministic policies that speak the tool-calling protocol.

The agent is stateless between turns: each turn it re-reads the conversation (instruction, calls made,
observations), so a resumed or replayed episode takes the same path. It learns the documented policy
by calling `read_docs` like any agent, and then asks the domain's planner for the next call.

Variants:
- `docs`: follows the documented policy only.
- `oracle`: the documented policy overlaid with every policy block in its system prompt (an Oracle
  bulletin, or the learned-policy block a method writes), rule by rule.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import orjson

from simulators.domain import Domain, PlannedCall, ToolExchange
from simulators.policy_block import merged_policy
from simulators.protocol import JSON, AssistantTurn, Message, ToolCall

__all__ = ["SCRIPTED_VARIANTS", "ScriptedAgent"]

SCRIPTED_VARIANTS: tuple[str, ...] = ("oracle", "docs")


class ScriptedAgent:
    def __init__(self, domain: Domain, variant: str = "oracle") -> None:
        if variant not in SCRIPTED_VARIANTS:
            raise ValueError(f"unknown scripted variant '{variant}'; known: {SCRIPTED_VARIANTS}")
        self._domain = domain
        self._variant = variant

    def respond(
        self, system: str, messages: Sequence[Message], tool_names: Collection[str] = ("read_docs",)
    ) -> AssistantTurn:
        """The next turn. Without a `read_docs` tool (the export's pitch scenarios) there are no documents
        to read, so the agent plans from the system prompt's blocks alone."""
        instruction = next((m.content for m in messages if m.role == "user"), "")
        history = exchanges(messages)
        turn_number = sum(1 for m in messages if m.role == "assistant") + 1
        documents = [h.observation for h in history if h.name == "read_docs"]
        if not documents and "read_docs" in tool_names:
            planned = PlannedCall("read_docs", {"doc": "policy"}, "Read the documented policy first.")
        else:
            texts = [*documents, system] if self._variant == "oracle" else documents
            planned = self._domain.next_call(instruction, merged_policy(*texts), history)
        arguments = orjson.dumps(dict(planned.arguments), option=orjson.OPT_SORT_KEYS).decode()
        call = ToolCall(id=f"call_{turn_number}", name=planned.name, arguments=arguments)
        return AssistantTurn(reasoning=planned.thought, tool_calls=(call,))


def exchanges(messages: Sequence[Message]) -> list[ToolExchange]:
    """Executed calls paired with their observations, in order."""
    results = {m.tool_call_id: m.content for m in messages if m.role == "tool"}
    history: list[ToolExchange] = []
    for message in messages:
        for call in message.tool_calls:
            if call.id in results:
                history.append(ToolExchange(call.name, _arguments(call.arguments), results[call.id]))
    return history


def _arguments(raw: str) -> Mapping[str, JSON]:
    try:
        value = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}

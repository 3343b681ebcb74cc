"""One episode's tool side: argument parsing, schemas, documents, the call budget, finish.

The domain world only sees well-formed calls to its own tools. Everything the model can get wrong
(unknown tool, arguments that are not a JSON object, a schema violation, calls past the budget, a
rejected finish) is answered here with an observation the model can act on; nothing raises.

The texts are the public reference's (`servelearnbench/agent.py` `run_turns`, `finish_args_error`;
`engine/env.py` `Env.step`), since agents learn from them: `not executed: unknown tool 'x'.`, the
`tool-call budget (50) exhausted` error, `not executed: finish requires 'pitch' (string).`, and
`{"accepted": true}` for an accepted finish. The reference checks no schema before a tool runs; a
world that answers bad arguments itself (`checks_own_arguments`, the banking world) and the reference's
document reader get them unchecked (a missing argument is Python's TypeError text), any other world's
calls are checked against the tool's schema here first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from simulators.documents import argument_error, is_sectioned, read_document
from simulators.domain import DomainWorld
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, ToolCall
from simulators.pycompat import py_type_name
from simulators.schema import schema_problem

__all__ = ["FINISH_ACK", "MAX_TOOL_CALLS", "ToolOutcome", "ToolSession", "finish_problem", "read_document"]

MAX_TOOL_CALLS = 50
"""Tool calls per episode, `finish` not counted."""

FINISH_ACK = '{"accepted": true}'
_BUDGET_SPENT = (f"Error: tool-call budget ({MAX_TOOL_CALLS}) exhausted — no further tool calls are possible; "
                 "submit your final answer with `finish`.")
_TEMPLATE_MARKUP = re.compile(r"</?arg_key>|</?arg_value>|</?tool_call>|<\|[a-z_]+\|>")


@dataclass(frozen=True)
class ToolOutcome:
    observation: str
    executed: bool
    """False when the call was refused before reaching a tool (unknown, malformed, over budget)."""
    finished: bool = False
    finish_arguments: Mapping[str, JSON] | None = None


def not_executed(why: str) -> ToolOutcome:
    return ToolOutcome(observation=f"not executed: {why}", executed=False)


class ToolSession:
    def __init__(self, environment: ScenarioEnvironment, world: DomainWorld) -> None:
        self._environment = environment
        self._world = world
        self._tool_names = environment.tool_names()
        self._checks_own = bool(getattr(world, "checks_own_arguments", False))
        self.calls_used = 0

    @property
    def world(self) -> DomainWorld:
        return self._world

    def execute(self, call: ToolCall) -> ToolOutcome:
        if call.name not in self._tool_names:
            return not_executed(f"unknown tool '{call.name}'.")
        arguments, problem = parse_arguments(call.arguments)
        if problem:
            return not_executed(f"arguments must be a JSON object that follows the tool's schema ({problem}).")
        schema = self._environment.tool_schema(call.name) or {}
        if call.name == "finish":
            problem = finish_problem(arguments, schema)
            if problem:
                return ToolOutcome(observation=f"not executed: {problem}", executed=True)
            return ToolOutcome(observation=FINISH_ACK, executed=True, finished=True, finish_arguments=arguments)
        if self.calls_used >= MAX_TOOL_CALLS:
            return ToolOutcome(observation=_BUDGET_SPENT, executed=False)
        self.calls_used += 1
        problem = self._argument_problem(call.name, arguments, schema)
        if problem:
            return ToolOutcome(observation=f"Error: {problem}", executed=True)
        return ToolOutcome(observation=self._run(call.name, arguments), executed=True)

    def _argument_problem(self, name: str, arguments: Mapping[str, JSON], schema: Mapping[str, JSON]) -> str | None:
        """What is wrong with the arguments before the tool runs: for the reference's document reader and
        for worlds that check their own, only what Python itself would refuse; else the schema."""
        if name == "read_docs" and is_sectioned(self._environment.docs):
            return argument_error(self._environment.docs, arguments)
        if self._checks_own and name != "read_docs":
            return None
        return schema_problem(arguments, schema)

    def _run(self, name: str, arguments: Mapping[str, JSON]) -> str:
        try:
            if name == "read_docs":
                return read_document(self._environment.docs, arguments, self._environment.system_prompt)
            return self._world.call(name, arguments)
        except ToolError as exc:
            return f"Error: {exc}"


def parse_arguments(raw: str) -> tuple[dict[str, JSON], str | None]:
    """The call's arguments, or the reason they are not a JSON object (Python's own JSON error text,
    as the reference reports it)."""
    if raw.strip() == "":
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return {}, f"invalid JSON: {str(exc)[:80]}"
    if not isinstance(value, dict):
        return {}, f"got {py_type_name(value)}, not an object"
    return value, None


def finish_problem(arguments: Mapping[str, JSON], schema: Mapping[str, JSON]) -> str | None:
    """Why a finish call is rejected, checked against its own schema in the reference's order:
    missing required fields, unknown fields, empty strings, tool-call markup, enums, and a refusal
    without a reason."""
    props: Mapping[str, JSON] = schema.get("properties") or {}
    missing = [key for key in schema.get("required") or [] if key not in arguments]
    if missing:
        listed = ", ".join(f"'{key}' ({(props.get(key) or {}).get('type', 'value')})" for key in missing)
        return f"finish requires {listed}."
    unknown = sorted(key for key in arguments if key not in props)
    if unknown:
        allowed = f"; allowed: {', '.join(props)}." if props else "; it takes no arguments."
        return "finish takes no argument named " + ", ".join(f"'{key}'" for key in unknown) + allowed
    for key, value in arguments.items():
        spec = props[key] or {}
        if spec.get("type") == "string" and (not isinstance(value, str) or not value.strip()):
            return f"finish argument '{key}' must be a non-empty string."
        markup = _TEMPLATE_MARKUP.search(value) if isinstance(value, str) else None
        if markup:
            return (f"finish argument '{key}' contains tool-call markup ({markup.group(0)!r}); re-issue "
                    "the call with plain values, one argument per field.")
        if "enum" in spec and value not in spec["enum"]:
            return f"finish argument '{key}' must be one of {spec['enum']}."
    if arguments.get("decision") == "refuse" and not str(arguments.get("reason") or "").strip():
        return "finish(decision=\"refuse\") requires 'reason' (the refusal code)."
    return None

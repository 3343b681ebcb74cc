"""One episode's tool side: argument parsing, schemas, documents, the call budget, finish.

The domain world only sees well-formed calls to its own tools. Everything the model can get wrong
(unknown tool, arguments that are not JSON, a schema violation, calls past the budget, a rejected
finish) is answered here with an observation the model can act on; nothing raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import orjson

from simulators.domain import DomainWorld
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, ToolCall
from simulators.schema import schema_problem

__all__ = ["MAX_TOOL_CALLS", "ToolOutcome", "ToolSession", "read_document"]

MAX_TOOL_CALLS = 50
"""Tool calls per episode, `finish` not counted."""


@dataclass(frozen=True)
class ToolOutcome:
    observation: str
    executed: bool
    """False when the call was refused before reaching a tool (unknown, malformed, over budget)."""
    finished: bool = False
    finish_arguments: Mapping[str, JSON] | None = None


def not_executed(why: str) -> ToolOutcome:
    return ToolOutcome(observation=f"Error: not executed: {why}", executed=False)


class ToolSession:
    def __init__(self, environment: ScenarioEnvironment, world: DomainWorld) -> None:
        self._environment = environment
        self._world = world
        self._tool_names = environment.tool_names()
        self.calls_used = 0

    @property
    def world(self) -> DomainWorld:
        return self._world

    def execute(self, call: ToolCall) -> ToolOutcome:
        if call.name not in self._tool_names:
            known = ", ".join(sorted(self._tool_names))
            return not_executed(f"unknown tool '{call.name}'. Available tools: {known}.")
        arguments, problem = parse_arguments(call.arguments)
        if problem:
            return not_executed(problem)
        schema = self._environment.tool_schema(call.name) or {}
        problem = schema_problem(arguments, schema)
        if call.name == "finish":
            if problem:
                return ToolOutcome(observation=f"Error: finish rejected: {problem}", executed=True)
            return ToolOutcome(observation="Episode finished.", executed=True, finished=True,
                               finish_arguments=arguments)
        if self.calls_used >= MAX_TOOL_CALLS:
            return not_executed(
                f"the budget of {MAX_TOOL_CALLS} tool calls is used up. Call finish now."
            )
        self.calls_used += 1
        if problem:
            return ToolOutcome(observation=f"Error: {problem}", executed=True)
        return ToolOutcome(observation=self._run(call.name, arguments), executed=True)

    def _run(self, name: str, arguments: Mapping[str, JSON]) -> str:
        try:
            if name == "read_docs":
                return read_document(self._environment.docs, arguments)
            return self._world.call(name, arguments)
        except ToolError as exc:
            return f"Error: {exc}"


def parse_arguments(raw: str) -> tuple[dict[str, JSON], str | None]:
    if raw.strip() == "":
        return {}, None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc}). Send one JSON object."
    if not isinstance(value, dict):
        return {}, "arguments must be a JSON object."
    return value, None


def read_document(docs: Mapping[str, str], arguments: Mapping[str, JSON]) -> str:
    """`read_docs(doc[, section])`: a whole document, or the part under one markdown heading."""
    name = str(arguments.get("doc", "")).strip().lower().removesuffix(".md")
    if name not in docs:
        raise ToolError(f"no document '{name}'. Documents: {', '.join(sorted(docs))}.")
    text = docs[name]
    section = arguments.get("section")
    if not section:
        return text
    return _section(text, str(section))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _find_heading(titles: list[str], wanted: str) -> int | None:
    """A heading by its text or its slug, whole first, else as the heading's ending: prompts name
    sections both ways (`Order modifications`, `order-modifications`, `modifications`)."""
    target = _slug(wanted)
    if not target:
        return None
    slugs = [_slug(title) for title in titles]
    for index, slug in enumerate(slugs):
        if slug == target:
            return index
    for index, slug in enumerate(slugs):
        if slug.endswith(f"-{target}"):
            return index
    return None


def _section(text: str, wanted: str) -> str:
    lines = text.splitlines()
    headings = [(i, line.lstrip("#").strip()) for i, line in enumerate(lines) if line.startswith("#")]
    index = _find_heading([title for _, title in headings], wanted)
    if index is not None:
        start = headings[index][0]
        level = len(lines[start]) - len(lines[start].lstrip("#"))
        end = len(lines)
        for later, _ in headings[index + 1:]:
            if len(lines[later]) - len(lines[later].lstrip("#")) <= level:
                end = later
                break
        return "\n".join(lines[start:end]).strip()
    titles = "; ".join(title for _, title in headings)
    raise ToolError(f"no section '{wanted}'. Sections: {titles}.")

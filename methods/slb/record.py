"""What a method written for the reference's interface learns from: its `EpisodeResult` and record text.

The fields are the reference's (`task_id`, `instruction` with its timestamp line, `timestamp` the
stream position, `reward` 0-1, `record`), and so is the record text, built from a shiftbench episode:
`INSTRUCTION: ...`, a blank line, then per step `[step n]` with `received:` (only where the model got
something other than the instruction or the last observation: the corrective message after a turn with
no call), `thought:` / `replied:` (reasoning between `<think>` tags split off the reply), `action:
name({json})` or `action: NONE [kind: (why)]`, `observation:` when there is one (a finish that ended the
episode has none), a blank line; after the last step a capped step when a limit ended the episode;
and the reference's score line, `Score: {reward*100:g}/100.`.

Steps are told apart as the reference's loop tells them apart, in its order: arguments that are not a
JSON object (`schema_invalid`), `finish` (accepted if it ended the episode, else an ordinary tool step
with its refusal), a name that is no tool (`unknown_tool`), otherwise a tool step.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

from simulators.record import EpisodeRecord, Step

__all__ = ["EpisodeResult", "episode_result", "reference_record", "reference_score_line"]

TOKEN_CAP = 256_000
"""The reference's output tokens per episode, named in its token-cap step."""
CUT_OFF_REPLY = "(reasoning ran too long and was cut off)"
FINISH = "finish"


@dataclass
class EpisodeResult:
    """A serving episode as a reference-interface method's `update` gets it."""

    task_id: str
    instruction: str
    timestamp: int
    reward: float
    record: str


def episode_result(record: EpisodeRecord, tool_names: Collection[str] | None) -> EpisodeResult:
    return EpisodeResult(record.task.task_id, record.task.instruction, record.position, record.reward,
                         reference_record(record, tool_names))


def reference_score_line(reward: float) -> str:
    return f"Score: {reward * 100:g}/100."


@dataclass(frozen=True)
class _Entry:
    """One step of the record, as the reference's trace would hold it."""

    kind: str
    name: str
    arguments: object
    observation: str
    thought: str = ""
    reply: str = ""
    corrective: str = ""
    """What the model was sent next instead of an observation (after a turn with no call)."""


def reference_record(record: EpisodeRecord, tool_names: Collection[str] | None = None) -> str:
    """The record text; `tool_names` are the scenario's tools (None: every name is a tool)."""
    instruction = record.task.instruction
    lines = [f"INSTRUCTION: {instruction}", ""]
    heard, previous = instruction, None
    for number, entry in enumerate(_entries(record, tool_names), start=1):
        lines.append(f"[step {number}]")
        if heard and heard != instruction and heard != f"Observation: {previous}":
            lines.append(f"  received: {heard}")
        if entry.thought:
            lines.append(f"  thought: {entry.thought}")
        if entry.reply:
            lines.append(f"  replied: {entry.reply}")
        if entry.kind in ("tool", "finish"):
            lines.append(f"  action: {entry.name}({json.dumps(entry.arguments or {}, ensure_ascii=False)})")
        else:
            lines.append(f"  action: NONE [{entry.kind}: {entry.name}]")
        if entry.observation:
            lines.append(f"  observation: {entry.observation}")
        lines.append("")
        previous = entry.observation
        heard = entry.corrective or f"Observation: {entry.observation}"
    lines.append(reference_score_line(record.reward))
    return "\n".join(lines)


def _entries(record: EpisodeRecord, tool_names: Collection[str] | None) -> list[_Entry]:
    entries = []
    for index, step in enumerate(record.steps):
        ended = index == len(record.steps) - 1 and record.end_reason == "finished"
        entries.append(_entry(step, ended, tool_names))
    cap = _cap_entry(record)
    if cap is not None:
        entries.append(cap)
    return entries


def _entry(step: Step, ended: bool, tool_names: Collection[str] | None) -> _Entry:
    thought, reply = split_reply(step.reply, step.reasoning)
    if step.action_name is None:
        if step.call_names:
            why = "(finish_with_tool)" if FINISH in step.call_names else "(multi_action)"
            return _Entry("invalid", why, None, step.observation, thought, reply)
        # The corrective message goes to the next step's `received:`; this step shows no observation.
        return _Entry("invalid", "(no_action)", None, "", thought, reply, corrective=step.observation)
    arguments = _arguments(step.action_arguments)
    if arguments is None:
        return _Entry("invalid", "(schema_invalid)", None, step.observation, thought, reply)
    if step.action_name == FINISH:
        return _Entry("finish", FINISH, arguments, "", thought, reply) if ended \
            else _Entry("tool", FINISH, arguments, step.observation, thought, reply)
    if tool_names is not None and step.action_name not in tool_names:
        return _Entry("invalid", "(unknown_tool)", None, step.observation, thought, reply)
    return _Entry("tool", step.action_name, arguments, step.observation, thought, reply)


def _cap_entry(record: EpisodeRecord) -> _Entry | None:
    if record.end_reason == "turn_limit":
        turns = len(record.steps)
        return _Entry("capped", "(step_cap)", None, f"episode reached the step cap ({turns} turns) without finish")
    if record.end_reason == "output_token_limit":
        return _Entry("capped", "(token_cap)", None, f"task exceeded {TOKEN_CAP} output tokens")
    if record.end_reason in ("finished", ""):
        return None
    return _Entry("error", f"({record.end_reason})", None, "")


def _arguments(raw: str) -> dict[str, object] | None:
    """The call's arguments as the reference parses them; None where they are not a JSON object."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def split_reply(raw: str, reasoning: str) -> tuple[str, str]:
    """(thought, reply): reasoning given apart, or thought between `<think>` tags in the reply."""
    if "</think>" in raw:
        head, _, tail = raw.partition("</think>")
        return reasoning or head.replace("<think>", "").strip(), tail.strip()
    if "<think>" in raw:
        return reasoning or raw.replace("<think>", "").strip(), CUT_OFF_REPLY
    return reasoning.strip(), raw.strip()

"""Episode records: what happened in one episode, and how a learning method reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simulators.protocol import JSON, TaskView

__all__ = ["EpisodeRecord", "Step", "render_record", "score_line"]


@dataclass(frozen=True)
class Step:
    reasoning: str
    reply: str
    action_name: str | None
    """None when the turn made no executable call (no call, several calls)."""
    action_arguments: str
    observation: str
    note: str = ""
    """Why no action ran, for `action: NONE [<why>]`."""
    call_names: tuple[str, ...] = ()
    """The names of a turn's calls when several came and none ran (the reference's record tells a
    finish among them apart)."""


@dataclass(frozen=True)
class EpisodeRecord:
    """One finished episode as a method may see it: the task view, the steps, the outcome."""

    task: TaskView
    position: int
    """Stream position (the task's timestamp) for serving episodes."""
    steps: tuple[Step, ...]
    reward: float
    finish_arguments: Mapping[str, JSON] | None
    end_reason: str

    @property
    def score(self) -> int:
        return round(self.reward * 100)

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> EpisodeRecord:
        """The record as the journal stored it (orjson of the dataclass)."""
        task = TaskView(**data["task"])
        steps = tuple(Step(**{**step, "call_names": tuple(step.get("call_names", ()))}) for step in data["steps"])
        return cls(task=task, position=int(data["position"]), steps=steps, reward=float(data["reward"]),
                   finish_arguments=data["finish_arguments"], end_reason=str(data["end_reason"]))

    def render(self) -> str:
        return render_record(self)


def score_line(reward: float) -> str:
    """`Score: 100/100.` for binary domains; pitch rewards are continuous (`Score: 73.5/100.`)."""
    return f"Score: {round(reward * 100, 4):g}/100."


def render_record(record: EpisodeRecord) -> str:
    parts = [f"INSTRUCTION: {record.task.instruction}", ""]
    for number, step in enumerate(record.steps, start=1):
        parts.append(f"[step {number}]")
        if step.reasoning:
            parts.append(f"  thought: {step.reasoning}")
        if step.reply:
            parts.append(f"  replied: {step.reply}")
        if step.action_name is None:
            parts.append(f"  action: NONE [{step.note}]")
        else:
            parts.append(f"  action: {step.action_name}({step.action_arguments})")
        parts.append(f"  observation: {step.observation}")
        parts.append("")
    parts.append(score_line(record.reward))
    return "\n".join(parts)

"""notes: a worked example of a learning method written outside shiftbench.

After each block it keeps a note per serving episode: the stream position, the score, the request (the
instruction without its timestamp line, first line only) and the tools the agent called. The context
shows the newest `keep` notes, newest first, under a header that says they are the agent's own
episodes. It calls no model. With `only_failures` it keeps the episodes that did not score 100 only.

It uses only what every method may use: `methods.base` (the interface), the `TaskView` and the
`EpisodeRecord` it is handed, `methods.options` (its options), and nothing of the runner. One file, so
it runs as `--methods ./notes.py:NOTES` as well as installed (`--methods notes`, an entry point).
"""

from __future__ import annotations

from collections.abc import Sequence

from methods.base import MethodSetup, MethodSpec
from methods.options import MethodOption
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["NOTES", "NotesMethod"]

HEADER = ("# Notes from your own earlier episodes\n"
          "Each line: the stream position, the score it got, the request, and the tools you called. "
          "The environment may change over time; newer notes come first.\n")


class NotesMethod:
    def __init__(self, keep: int, only_failures: bool) -> None:
        self.keep = keep
        self.only_failures = only_failures
        self.notes: list[dict[str, JSON]] = []

    def context(self, task: TaskView) -> str:
        if not self.notes:
            return ""
        lines = [f"- position {n['position']}, Score: {n['score']}/100.: {n['request']} -> {n['tools'] or 'no tool'}"
                 for n in reversed(self.notes[-self.keep:])]
        return HEADER + "\n".join(lines) + "\n"

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        for record in records:
            if self.only_failures and record.score == 100:
                continue
            tools = ", ".join(step.action_name for step in record.steps if step.action_name)
            self.notes.append({"position": record.position, "score": record.score,
                               "request": _request(record.task.instruction), "tools": tools})
        del self.notes[:-self.keep]  # what is never shown is not kept: checkpoints stay small

    def state(self) -> JSON:
        return {"notes": [dict(note) for note in self.notes]}

    def load(self, state: JSON) -> None:
        self.notes = [dict(note) for note in state["notes"]]


def _request(instruction: str) -> str:
    body = instruction.split("\n\n", 1)[-1] if instruction.startswith("Current timestamp:") else instruction
    return body.strip().splitlines()[0][:160] if body.strip() else ""


def _build(setup: MethodSetup) -> NotesMethod:
    return NotesMethod(keep=int(setup.options["keep"]), only_failures=bool(setup.options["only_failures"]))


NOTES = MethodSpec(
    name="notes", summary="The newest notes of its own episodes: position, score, request, tools (example).",
    uses_model=False, build=_build,
    options=(MethodOption("keep", int, 8, "notes shown (and kept)", low=1, high=1000),
             MethodOption("only_failures", bool, False, "keep only the episodes that did not score 100"),
             MethodOption("block_size", int, 1, "serving episodes between two learning steps", low=1, high=1000)),
)

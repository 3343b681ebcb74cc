"""The pitch world: there is no database. The product sheet is in the instruction, the hidden
profile in the evaluator, and the only actions are `read_docs` and `finish`, both handled by the
tool session. The world exists so that pitch episodes run through the same loop as every domain."""

from __future__ import annotations

from collections.abc import Mapping

from simulators.errors import ToolError
from simulators.protocol import JSON

__all__ = ["PitchWorld"]


class PitchWorld:
    __slots__ = ("task_id",)

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id

    def call(self, name: str, arguments: Mapping[str, JSON]) -> str:
        raise ToolError(f"'{name}' is not a pitch tool. Write the pitch and submit it with finish(pitch=...).")

    def snapshot(self) -> JSON:
        return {}

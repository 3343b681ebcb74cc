"""blind: no learning. The documents and the tools are all the agent has (the lower reference)."""

from __future__ import annotations

from methods.base import MethodSetup, MethodSpec, NonLearning
from simulators.protocol import TaskView

__all__ = ["BLIND", "BlindMethod"]


class BlindMethod(NonLearning):
    def context(self, task: TaskView) -> str:
        return ""


def _build(setup: MethodSetup) -> BlindMethod:
    return BlindMethod()


BLIND = MethodSpec(name="blind", summary="No learning: documents and tools only (lower reference).",
                   uses_model=False, learns=False, build=_build)

"""blind: no learning. The documents and the tools are all the agent has (the lower reference)."""

from __future__ import annotations

from collections.abc import Sequence

from methods.base import MethodSetup, MethodSpec
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["BLIND", "BlindMethod"]


class BlindMethod:
    def context(self, task: TaskView) -> str:
        return ""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        return None

    def state(self) -> JSON:
        return {}

    def load(self, state: JSON) -> None:
        return None


def _build(setup: MethodSetup) -> BlindMethod:
    return BlindMethod()


BLIND = MethodSpec(name="blind", summary="No learning: documents and tools only (lower reference).",
                   uses_model=False, learns=False, build=_build)

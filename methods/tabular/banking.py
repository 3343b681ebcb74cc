"""stub"""

from __future__ import annotations

from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord


class BankingAdapter:
    def learn(self, record: EpisodeRecord) -> None:
        return None

    def context(self, task: TaskView) -> dict[str, JSON]:
        return {}

    def state(self) -> JSON:
        return {}

    def load(self, state: JSON) -> None:
        return None

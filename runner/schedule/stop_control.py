"""How a run is told to stop dispatching, and who judges a pitch episode: the engine's two seams."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from runner.config.plan import Stream
from runner.display.progress import RunProgress
from simulators.domain import Judge

__all__ = ["JudgeFactory", "StopControl", "offline_judge"]


@dataclass
class StopControl:
    """Stop dispatching and let in-flight episodes finish (first Ctrl-C, or the budget cap reached).
    The caller owns cancellation."""

    requested: bool = False
    reason: str = ""
    status: str = "interrupted"
    progress: RunProgress | None = None
    """The dashboard's state: shows the stop and its reason from the moment it is requested."""
    on_request: list[Callable[[], None]] = field(default_factory=list)
    """Called once, when the stop is requested (what waits to start gives up its wait)."""

    def request(self, reason: str, status: str = "interrupted") -> None:
        if not self.requested:
            self.requested, self.reason, self.status = True, reason, status
            if self.progress is not None:
                self.progress.status, self.progress.stop_reason = "stopping", reason
            for listener in self.on_request:
                listener()


JudgeFactory = Callable[[Stream, str, int], Judge | None]
"""(stream, unit id, the episode's call priority) -> the pitch judge for that episode; None means the
domain's offline judge. A serving episode's judge is on the serving path, so its calls go at its priority."""


def offline_judge(stream: Stream, unit_id: str, priority: int) -> Judge | None:
    return None

"""Live run state the dashboard shows: plain counters the engine updates, the display only reads.

Kept in memory (not read back from the journal) so the display costs nothing on the hot path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RunProgress", "StreamProgress"]


@dataclass
class StreamProgress:
    stream_id: str
    model: str
    method: str
    scenario: str
    serving_total: int
    test_total: int
    windows: int
    serving_done: int = 0
    test_done: int = 0
    window: int = 0
    phase: str = "serving"
    """serving | testing | done | stopped"""
    hidden_rewards: list[float] = field(default_factory=list)
    specified_rewards: list[float] = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.serving_done + self.test_done

    @property
    def total(self) -> int:
        return self.serving_total + self.test_total

    def record_test(self, category: str, reward: float) -> None:
        self.test_done += 1
        target = self.hidden_rewards if category == "hidden" else self.specified_rewards
        target.append(reward)


@dataclass
class RunProgress:
    run_id: str
    journal_path: str
    streams: dict[str, StreamProgress] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    started: float = field(default_factory=time.monotonic)
    input_tokens: int = 0
    output_tokens: int = 0
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    budget_usd: float | None = None
    calls_in_flight: int = 0
    call_limit: int = 0
    retries: int = 0
    rate_limited: int = 0
    episodes_requeued: int = 0
    call_started: dict[int, float] = field(default_factory=dict)
    status: str = "running"
    resumed_units: int = 0
    """Units already done when this process started (excluded from the rate behind the ETA)."""

    def add_tokens(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def oldest_call_age(self) -> float:
        if not self.call_started:
            return 0.0
        return self.clock() - min(self.call_started.values())

    @property
    def done(self) -> int:
        return sum(s.done for s in self.streams.values())

    @property
    def total(self) -> int:
        return sum(s.total for s in self.streams.values())

    def eta_seconds(self) -> float | None:
        finished_here = self.done - self.resumed_units
        elapsed = self.clock() - self.started
        if finished_here <= 0 or elapsed <= 0:
            return None
        return (self.total - self.done) * elapsed / finished_here

"""Live run state the dashboard shows: plain counters the engine updates, the display only reads.

Kept in memory (not read back from the journal) so the display costs nothing on the hot path.

What tells a stuck stream from a slow one: per stream, the turn count of each episode in flight (a
slow provider shows turns that still advance), the time since its last finished episode, its
episodes per minute, and its state (breaker open, waiting for quota, stopping). Each stream also keeps
when its latest serving and test episodes finished in this process, apart: the run's ETA
(`runner.display.eta`) times the two kinds of work by their own recent pace.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["CacheCounter", "Pausable", "PoolCounts", "RunProgress", "StreamProgress"]


class PoolCounts(Protocol):
    """An endpoint pool's router, as the dashboard sees it."""

    label: str

    def counts(self) -> list[tuple[str, int, int, int]]:
        """(replica, calls outstanding, served, failed) per replica."""
        ...


class BatchLine(Protocol):
    """A run's batcher (`--batch tests`), as the dashboard sees it."""

    def dashboard_line(self) -> str: ...


class Pausable(Protocol):
    """An endpoint's circuit breaker, as the dashboard sees it."""

    label: str

    def paused_for(self) -> float | None:
        """None while calls go out; else seconds until the next probe."""
        ...


@dataclass
class CacheCounter:
    """Prompt caching over the priced calls sent so far: input tokens, those read from and written to the
    provider's cache, and the spend saved against uncached prices (`runner.cost.pricing.saved_usd`)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    saved_usd: float = 0.0

    def add(self, input_tokens: int, cached_input_tokens: int, cache_write_tokens: int, saved_usd: float) -> None:
        self.input_tokens += input_tokens
        self.cached_input_tokens += cached_input_tokens
        self.cache_write_tokens += cache_write_tokens
        self.saved_usd += saved_usd

    @property
    def hit_rate(self) -> float | None:
        return self.cached_input_tokens / self.input_tokens if self.input_tokens else None


RATE_SAMPLE = 50
"""Finished episodes a stream's rate is measured over: recent enough to follow a slowdown."""
SERVING_SAMPLE = 50
"""A stream's latest serving episodes its serving pace (behind the ETA) is measured over: a slow start, a
resume or a change of pace has left the ETA once that many episodes have finished at the new pace. Long
enough to span half a window's serving, so the test set a window end fans out (which slows the serving
beside it for a while) is averaged in rather than taken for the new pace (bench/eta_error.py)."""


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
    """The dataset's id of the window the stream's serving is in."""
    window_number: int = 0
    """Which of its `windows` that is (1 for the first; 0 before the stream has started)."""
    phase: str = "serving"
    """serving | testing | done | stopped"""
    hidden_rewards: list[float] = field(default_factory=list)
    specified_rewards: list[float] = field(default_factory=list)
    spent_usd: float = 0.0
    cache: CacheCounter = field(default_factory=CacheCounter)
    in_flight: dict[str, int] = field(default_factory=dict)
    """Unit id -> agent turns so far, for each of the stream's episodes in flight."""
    finished_at: deque[float] = field(default_factory=lambda: deque(maxlen=RATE_SAMPLE))
    """Clock times of the stream's latest finished episodes (the rate's sample)."""
    last_finished: float | None = None
    serving_finished_at: deque[float] = field(default_factory=lambda: deque(maxlen=SERVING_SAMPLE + 1))
    """Clock times of the stream's latest serving episodes finished in this process (one more than the
    sample: the first is where the sample's time starts)."""
    serving_timed: int = 0
    """Serving episodes whose end this process has timed (`episode_ended`)."""
    turns_started: int = 0
    """Agent turns (model calls) the stream's episodes started in this process."""
    serving_turns: int = 0
    """Turns of the serving episodes finished in this process (`serving_timed` of them)."""
    test_timed: int = 0
    test_turns: int = 0
    """Test episodes finished in this process and their turns."""
    serving_resumed: int = 0
    """Serving episodes already done when this process started."""
    quota_until: float = 0.0
    """Clock time until which a call of this stream waits out a rate limit (429)."""
    held: dict[int, str] = field(default_factory=dict)
    """Call -> why it is held before it is sent ("breaker open", "waiting for quota"), for each of the
    stream's calls that waits at its endpoint's breaker or rate limiter (`runner.providers.waits`)."""
    replica: int = 0
    """The stream replica (`--replicas K`); the dashboard names it beside the scenario."""

    @property
    def scenario_label(self) -> str:
        return self.scenario if self.replica == 0 else f"{self.scenario} replica {self.replica}"

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

    def call_held(self, call: int, reason: str | None) -> None:
        """A call of this stream waits for `reason` before it is sent, or (None) no longer does."""
        if reason is None:
            self.held.pop(call, None)
        else:
            self.held[call] = reason

    def turn_started(self, unit_id: str) -> None:
        self.in_flight[unit_id] = self.in_flight.get(unit_id, 0) + 1
        self.turns_started += 1

    def episode_ended(self, unit_id: str, now: float, finished: bool = True) -> None:
        """The episode left flight: journaled (`finished`), or dropped to be run again."""
        turns = self.in_flight.pop(unit_id, 0)
        if finished:
            self.finished_at.append(now)
            self.last_finished = now
            # The engine counts an episode (`serving_done`, `record_test`) before it says it ended, with
            # no await between: a serving count this process has not timed yet is this episode's.
            if self.serving_done - self.serving_resumed > self.serving_timed:
                self.serving_timed += 1
                self.serving_turns += turns
                self.serving_finished_at.append(now)
            else:
                self.test_timed += 1
                self.test_turns += turns

    def episodes_per_minute(self, now: float, started: float) -> float | None:
        """Over the latest finished episodes (or since the run started, for the first few)."""
        if not self.finished_at:
            return None
        since = self.finished_at[0] if len(self.finished_at) == RATE_SAMPLE else started
        span = now - since
        return 60 * len(self.finished_at) / span if span > 0 else None

    def since_progress(self, now: float, started: float) -> float:
        """Seconds since the stream's last finished episode (or since the run started)."""
        return now - (self.last_finished if self.last_finished is not None else started)


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
    cache: CacheCounter = field(default_factory=CacheCounter)
    reserved_usd: float = 0.0
    budget_usd: float | None = None
    budget_waiting: int = 0
    """Calls waiting for room under the cap (they go as calls in flight settle below their worst case)."""
    calls_in_flight: int = 0
    call_limit: int = 0
    retries: int = 0
    rate_limited: int = 0
    episodes_requeued: int = 0
    call_started: dict[int, float] = field(default_factory=dict)
    status: str = "running"
    stop_reason: str = ""
    """Why the run is stopping, set the moment a stop is requested."""
    resumed_units: int = 0
    """Units already done when this process started (journaled before: the ETA times only this process)."""
    endpoints: list[Pausable] = field(default_factory=list)
    pools: list[PoolCounts] = field(default_factory=list)
    batchers: list[BatchLine] = field(default_factory=list)
    call_marks: deque[tuple[float, int]] = field(default_factory=deque)
    """(clock, turns started in this process) each time the ETA was read: the run's recent call rate
    (`runner.display.eta.calls_per_second`)."""

    def pool_lines(self) -> list[str]:
        """'pool <name>: <replica> <n> out <m> served[ <k> failed], ...' for each endpoint pool."""
        lines = []
        for pool in self.pools:
            replicas = [f"{label} {out} out {served} served" + (f" {failed} failed" if failed else "")
                        for label, out, served, failed in pool.counts()]
            lines.append(f"pool {pool.label}: " + ", ".join(replicas))
        return lines

    def paused_endpoints(self) -> list[str]:
        """'<endpoint> paused, probe in Ns' for each endpoint whose breaker is open."""
        paused = []
        for endpoint in self.endpoints:
            wait = endpoint.paused_for()
            if wait is not None:
                paused.append(f"{endpoint.label} paused, probe {'out' if wait == 0 else f'in {wait:.0f}s'}")
        return paused

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

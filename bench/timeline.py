"""Call slots left idle, from a run's call timeline (`EngineRun.spans`: each model call inside the gate).

With C slots over a run of W seconds there are C x W slot-seconds; the calls hold some of them and the
rest sat idle. Where the idle time falls says what to fix:
- start: before the first test call, when only the serving streams have work (a test set needs its
  window's serving first), so at most one slot per serving stream can be busy;
- middle: from then until the last serving call ends (hand-offs between calls, a scheduler that holds
  calls back);
- tail: after the last serving call, when only test sets are left (their last episodes end unevenly).
A slot is also held a little longer than the reply's latency (the client's and the mock's work, the
loopback round trip): `hold_ms` is the mean span of a call, so calls x hold / C + idle / C = wall.
Both figures move much less with the machine's load than the wall time does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.harness import CallSpan
from runner.providers.priority import SERVING

__all__ = ["SlotIdle", "forced_idle_bound", "slot_idle"]


@dataclass(frozen=True)
class SlotIdle:
    start_s: float
    middle_s: float
    tail_s: float
    hold_ms: float

    @property
    def total_s(self) -> float:
        return self.start_s + self.middle_s + self.tail_s


def _busy(spans: Sequence[CallSpan], lo: float, hi: float) -> float:
    return sum(max(0.0, min(s.ended, hi) - max(s.started, lo)) for s in spans)


def slot_idle(spans: Sequence[CallSpan], slots: int, wall_s: float) -> SlotIdle:
    """Idle slot-seconds in each phase of a run of `wall_s` seconds (spans in seconds since its start).
    Without serving calls (or without test calls) the whole run counts as the middle."""
    serving = [s for s in spans if s.priority <= SERVING]
    tests = [s for s in spans if s.priority > SERVING]
    first_test = min((s.started for s in tests), default=0.0) if serving else 0.0
    last_serving = max((s.ended for s in serving), default=wall_s) if tests else wall_s
    first_test = min(first_test, last_serving)

    def idle(lo: float, hi: float) -> float:
        return max(0.0, slots * (hi - lo) - _busy(spans, lo, hi))

    hold = sum(s.ended - s.started for s in spans) / len(spans) if spans else 0.0
    return SlotIdle(idle(0.0, first_test), idle(first_test, last_serving), idle(last_serving, wall_s),
                    1000 * hold)


def forced_idle_bound(calls: int, latency_s: float, slots: int, serving_streams: int,
                      first_window_turns: int) -> float:
    """A lower bound on the makespan that counts the slots no scheduler can fill: until the first window's
    serving is done (`first_window_turns` calls one after another, the shortest stream's) no test set
    exists, so at most one slot per serving stream is busy (block size 1) and the others idle."""
    forced = max(0, slots - serving_streams) * first_window_turns * latency_s
    return (calls * latency_s + forced) / slots

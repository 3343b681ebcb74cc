"""The call timeline's idle slot-seconds: each phase's share, computed from spans (no timing)."""

from __future__ import annotations

import pytest

from bench.harness import CallSpan
from bench.timeline import forced_idle_bound, slot_idle
from runner.providers.priority import SERVING, TEST


def test_idle_is_split_at_the_first_test_call_and_the_last_serving_call() -> None:
    spans = [CallSpan(0.0, 1.0, SERVING), CallSpan(1.0, 2.0, SERVING),  # one stream, two serving calls
             CallSpan(1.0, 3.0, TEST), CallSpan(2.0, 3.0, TEST)]
    idle = slot_idle(spans, slots=2, wall_s=4.0)
    assert idle.start_s == pytest.approx(1.0)  # [0, 1): one of two slots busy
    assert idle.middle_s == pytest.approx(0.0)  # [1, 2): both busy
    assert idle.tail_s == pytest.approx(2.0)  # [2, 4): two busy until 3, none after
    assert idle.hold_ms == pytest.approx(1250.0)
    assert idle.total_s + sum(s.ended - s.started for s in spans) == pytest.approx(2 * 4.0)


def test_without_serving_calls_everything_is_the_middle() -> None:
    idle = slot_idle([CallSpan(0.0, 1.0, TEST)], slots=2, wall_s=1.0)
    assert (idle.start_s, idle.middle_s, idle.tail_s) == (0.0, pytest.approx(1.0), 0.0)


def test_the_forced_idle_bound_counts_slots_no_stream_can_use_before_any_test_set() -> None:
    # 3 streams, 8 slots, 9 serving calls before the first test set: 5 slots idle for 9 calls.
    assert forced_idle_bound(630, 0.1, 8, 3, 9) == pytest.approx((63 + 4.5) / 8)
    assert forced_idle_bound(630, 0.1, 2, 3, 9) == pytest.approx(63 / 2)  # more streams than slots

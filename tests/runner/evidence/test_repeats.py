"""Repeats: per-repeat averages, their spread and pass^k, by hand."""

from __future__ import annotations

import pytest

from runner.stats.outcomes import Outcome
from runner.stats.repeats import average_scores, repeat_summary


def outcome(scenario: str, task: str, category: str, repeat: int, reward: float, replica: int = 0) -> Outcome:
    return Outcome(model="m", method="blind", scenario=scenario, task_id=task, family="f", category=category,
                   window=0, repeat=repeat, reward=reward, turns=1, tool_calls=0, input_tokens=0, output_tokens=0,
                   cost_usd=0.0, latency_s=0.0, replica=replica)


def test_repeat_summary_by_hand() -> None:
    # retail_l1 hidden a: 1,1,1  b: 1,0,1   fully specified c: 1,1,0
    # pitch_l1 hidden p: 1,1,1
    rewards = {("retail_l1", "a", "hidden"): [1, 1, 1], ("retail_l1", "b", "hidden"): [1, 0, 1],
               ("retail_l1", "c", "fully_specified"): [1, 1, 0], ("pitch_l1", "p", "hidden"): [1, 1, 1]}
    outcomes = [outcome(s, t, c, r, float(v)) for (s, t, c), values in rewards.items() for r, v in enumerate(values)]
    summary = repeat_summary(outcomes)
    assert summary is not None and summary.repeats == 3
    # Avg H per repeat: retail H (100, 50, 100) and pitch 100 -> 100, 75, 100; Avg F: 100, 100, 0.
    assert summary.avg_h_by_repeat == [100.0, 75.0, 100.0] and summary.avg_h_spread == 25.0
    assert summary.avg_f_by_repeat == [100.0, 100.0, 0.0] and summary.avg_f_spread == 100.0
    # pass^1: all 4 solved first; pass^2: a, c, p -> 3/4; pass^3: a, p -> 2/4.
    assert summary.pass_k == {"1": 1.0, "2": 0.75, "3": 0.5}
    # The mean over repeats is what every score reports: retail H = (100 + 2/3*100) / 2, pitch 100.
    avg_h, avg_f = average_scores(outcomes)
    assert avg_h == pytest.approx(((100 + 200 / 3) / 2 + 100) / 2)
    assert avg_f == pytest.approx(200 / 3)


def test_no_repeats_no_summary() -> None:
    assert repeat_summary([outcome("retail_l1", "a", "hidden", 0, 1.0)]) is None


def test_pass_k_counts_a_tasks_tries_within_each_stream_replica() -> None:
    """With --replicas and --repeats, a task's K tries are its repeats in one replica (one learned state);
    mixing replicas would make 'both tries passed' compare tries of two different states."""
    # replica 0: a 1,1  b 0,0   replica 1: a 0,0  b 1,1 -> every (replica, task) passes both or neither.
    rewards = {(0, "a"): [1, 1], (0, "b"): [0, 0], (1, "a"): [0, 0], (1, "b"): [1, 1]}
    outcomes = [outcome("retail_l1", t, "hidden", r, float(v), replica) for (replica, t), values in rewards.items()
                for r, v in enumerate(values)]
    summary = repeat_summary(outcomes)
    assert summary is not None and summary.pass_k == {"1": 0.5, "2": 0.5}

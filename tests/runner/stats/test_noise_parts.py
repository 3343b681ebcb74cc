"""The parts of the noise floor and the small statistics that mutation testing found unchecked (bench/README.md,
"Mutation testing"): per-setting and per-window spreads, two replicas' SD, the least-stable order, the
tie tolerance of win / tie / loss, each worked by hand."""

from __future__ import annotations

import math

import pytest

from runner.stats.noise import mde, noise_floor
from runner.stats.outcomes import Outcome
from runner.stats.stats import pass_hat_k, win_tie_loss


def outcome(replica: int, task: str, reward: float, category: str = "hidden", window: int = 0,
            scenario: str = "retail_l1", repeat: int = 0) -> Outcome:
    return Outcome(model="m", method="blind", scenario=scenario, task_id=task, family="f", category=category,
                   window=window, repeat=repeat, reward=reward, turns=1, tool_calls=1, input_tokens=0,
                   output_tokens=0, cost_usd=0.0, latency_s=0.0, replica=replica)


def test_two_replicas_have_an_sd_and_every_setting_and_window_its_own_spread() -> None:
    # retail_l1, replica 0 / 1: hidden window 0 solves 2/2 and 1/2, window 1 0/2 and 1/2; specified 1/1 and 0/1.
    table = {0: {"h0a": 1.0, "h0b": 1.0, "h1a": 0.0, "h1b": 0.0, "f0": 1.0},
             1: {"h0a": 1.0, "h0b": 0.0, "h1a": 1.0, "h1b": 0.0, "f0": 0.0}}
    outcomes = [outcome(r, task, reward, "fully_specified" if task.startswith("f") else "hidden",
                        window=1 if task.startswith("h1") else 0) for r, row in table.items()
                for task, reward in row.items()]
    outcomes += [outcome(r, "p", 0.5 * r, scenario="pitch_l1") for r in (0, 1)]
    floor = noise_floor(outcomes)
    assert floor is not None and floor.replicas == 2
    retail = floor.settings["retail_l1"]
    assert retail["h"].by_replica == [50.0, 50.0] and retail["h"].sd == 0.0
    assert retail["f"].by_replica == [100.0, 0.0] and retail["f"].sd == pytest.approx(100 / math.sqrt(2))
    assert (retail["f"].min, retail["f"].max) == (0.0, 100.0)
    assert floor.settings["pitch_l1"]["h"].by_replica == [0.0, 50.0] and "f" not in floor.settings["pitch_l1"]
    windows = {w.window: w for w in floor.windows["retail_l1"]}
    assert windows[0].hidden.by_replica == [100.0, 50.0] and windows[1].hidden.by_replica == [0.0, 50.0]
    assert windows[0].hidden.sd == pytest.approx(50 / math.sqrt(2))
    assert windows[0].fully_specified.by_replica == [100.0, 0.0] and windows[1].fully_specified.sd is None
    # Avg H: (50 + 0) / 2 and (50 + 50) / 2; SD of two values is |a - b| / sqrt(2).
    assert floor.avg_h.by_replica == [25.0, 50.0] and floor.avg_h.sd == pytest.approx(25 / math.sqrt(2))


def test_least_stable_tasks_break_a_tied_flip_rate_by_the_spread_of_their_rewards() -> None:
    # Both tasks flip in 2 of 3 pairs; "wide" swings 0 <-> 1, "narrow" 0.4 <-> 0.6 (repeats averaged).
    outcomes = [outcome(r, "narrow", reward) for r, reward in enumerate((0.4, 0.6, 0.6))]
    outcomes += [outcome(r, "wide", reward) for r, reward in enumerate((0.0, 1.0, 1.0))]
    outcomes += [outcome(r, "still", 1.0) for r in range(3)]
    floor = noise_floor(outcomes)
    assert floor is not None
    assert [(f.task_id, f.flip_rate) for f in floor.least_stable] == [
        ("wide", pytest.approx(2 / 3)), ("narrow", pytest.approx(2 / 3)), ("still", 0.0)]


def test_a_difference_at_the_tolerance_is_a_tie_and_k_below_one_is_refused() -> None:
    assert win_tie_loss([(1e-9, 0.0), (0.0, 1e-9), (2e-9, 0.0), (0.0, 2e-9)]) == (1, 2, 1)
    with pytest.raises(ValueError, match="k must be at least 1"):
        pass_hat_k({"a": [1.0]}, 0)


def test_the_sd_note_stops_at_five_replicas_and_avg_f_has_its_spread_and_mde_at_the_given_power() -> None:
    def reward(r: int, i: int) -> float:
        return float((r + i) % 3 == 0) if i < 2 else float((r * i) % 5 < 2)

    def stream(replicas: int) -> list[Outcome]:
        return [outcome(r, task, reward(r, i), category)
                for r in range(replicas) for i, (task, category) in enumerate(
                    [("h1", "hidden"), ("h2", "hidden"), ("f1", "fully_specified"), ("f2", "fully_specified"),
                     ("f3", "fully_specified")])]
    four, five = noise_floor(stream(4)), noise_floor(stream(5), power=0.9)
    assert four is not None and five is not None
    assert four.notes and not five.notes
    assert five.power == 0.9
    scores = [100 * sum(reward(r, i) for i in (2, 3, 4)) / 3 for r in range(5)]
    assert five.avg_f.by_replica == pytest.approx(scores)
    assert five.mde_avg_f == pytest.approx(mde(five.avg_f.sd, 5, 0.9))
    assert five.mde_avg_h == pytest.approx(mde(five.avg_h.sd, 5, 0.9))
    assert five.mde_avg_f != pytest.approx(mde(five.avg_f.sd, 5, 0.8))


def test_flips_average_repeats_name_their_task_and_skip_a_task_one_replica_lacks() -> None:
    # "a" lacks replica 1 (sorted first, so it must be skipped, not end the list); "b" two repeats in
    # replica 0 (0 and 1: mean 0.5) against 0.5 in replica 1: no flip; "c" 0 against 1: a flip.
    outcomes = [outcome(0, "a", 1.0), outcome(0, "b", 0.0), outcome(0, "b", 1.0, repeat=1), outcome(1, "b", 0.5),
                outcome(0, "c", 0.0, "fully_specified", scenario="banking_l1"),
                outcome(1, "c", 1.0, "fully_specified", scenario="banking_l1")]
    floor = noise_floor(outcomes)
    assert floor is not None
    flips = {(f.scenario, f.task_id): f for f in floor.least_stable}
    assert set(flips) == {("retail_l1", "b"), ("banking_l1", "c")}
    assert flips[("retail_l1", "b")].rewards == [0.5, 0.5] and flips[("retail_l1", "b")].flip_rate == 0.0
    assert flips[("banking_l1", "c")].category == "fully_specified" and flips[("banking_l1", "c")].flip_rate == 1.0
    assert floor.flip_rate == 0.5 and floor.tasks_flipping == 0.5
    alone = noise_floor([outcome(0, "x", 1.0), outcome(1, "y", 1.0)])
    assert alone is not None and alone.flip_rate is None and alone.tasks_flipping is None

"""The split of a sweep into shards: every cell once, the same split in every process, balanced by
projected work on the full built-in sweep, and the budget shared by projected cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from methods.registry import get_method_spec
from runner.config.plan import plan_streams
from runner.config.prices import Price
from runner.shards.money import render_split, shard_caps
from runner.shards.split import CellWork, episode_turns, split_cells, streams_work
from simulators.dataset import load_dataset

FOUR_METHODS = ("blind", "oracle", "tabular", "rag")


def calls_to_learn(method: str) -> bool:
    spec = get_method_spec(method)
    return spec.learns and spec.uses_model


def test_the_full_built_in_sweep_of_four_methods_splits_within_15_percent(built_suite: Path) -> None:
    dataset = load_dataset(built_suite)
    streams = plan_streams(["scripted"], FOUR_METHODS, list(dataset.scenarios.values()),
                           learns=lambda name: get_method_spec(name).learns)
    cells = streams_work(streams, calls_to_learn, {})
    assert len(cells) == 36
    for count in (2, 3, 4, 6, 8):
        split = split_cells(cells, count)
        mean = sum(split.turns) / count
        print(f"{count} shards: projected turns {split.turns}, busiest {100 * split.imbalance:.2f}% above the "
              f"mean {mean:,.0f}")
        assert sorted(split.assignment) == sorted(c.stream_id for c in cells)
        assert sum(split.turns) == sum(c.turns for c in cells)
        if count == 4:
            assert max(split.turns) <= 1.15 * mean
    # A learning stream's serving episodes are work too: tabular's cells weigh more than blind's.
    work = {c.stream_id: c.turns for c in cells}
    assert work["scripted|tabular|retail_l1"] > work["scripted|blind|retail_l1"] > 0


def test_the_split_is_the_same_in_every_process_and_in_plan_order() -> None:
    cells = [CellWork(f"m|x|s{i}", "m", turns, 0.0) for i, turns in enumerate([5, 9, 9, 2, 7, 7, 1, 3])]
    first, again = split_cells(cells, 3), split_cells(list(cells), 3)
    assert first == again
    assert list(first.assignment) == [c.stream_id for c in cells]
    # largest first, ties in plan order, each to the least loaded shard (ties to the lowest index)
    assert first.assignment["m|x|s1"] == 0 and first.assignment["m|x|s2"] == 1
    assert sorted(first.turns, reverse=True)[0] - sorted(first.turns)[0] <= 9
    with pytest.raises(ValueError):
        split_cells(cells, 0)


def test_projected_turns_read_the_records_a_request_names(built_suite: Path) -> None:
    dataset = load_dataset(built_suite, only=("banking_l1", "pitch_l1"))
    banking = dataset.scenarios["banking_l1"].test[0]
    pitch = dataset.scenarios["pitch_l1"].test[0]
    # docs + one lookup per named record (transaction, account, merchant) + the gold's write(s) + finish
    assert episode_turns(banking) == 2 + 3 + len(banking.evaluator.actions)
    assert episode_turns(pitch) == 2


def test_the_budget_is_shared_by_projected_cost_and_never_exceeded() -> None:
    cells = [CellWork("a|x|s", "a", 100, 3.0), CellWork("b|x|s", "b", 100, 1.0), CellWork("c|x|s", "c", 50, 0.0)]
    split = split_cells(cells, 3)
    caps = shard_caps(10.0, split)
    by_stream = {stream: caps[index] for stream, index in split.assignment.items()}
    assert by_stream["a|x|s"] == pytest.approx(7.5) and by_stream["b|x|s"] == pytest.approx(2.5)
    assert by_stream["c|x|s"] == 0.0
    assert sum(c or 0.0 for c in caps) <= 10.0
    assert shard_caps(None, split) == [None, None, None]
    # Free models only: the shares follow projected turns.
    free = split_cells([CellWork("a|x|s", "a", 300, 0.0), CellWork("b|x|s", "b", 100, 0.0)], 2)
    assert shard_caps(1.0, free) == [0.75, 0.25]
    # Odd shares round down to a micro-dollar: the caps never add up past the budget.
    thirds = split_cells([CellWork(f"a|x|{i}", "a", 1, 1.0) for i in range(3)], 3)
    assert sum(c or 0.0 for c in shard_caps(1.0, thirds)) <= 1.0
    text = render_split(split, caps, 1, "sw-test", 10.0)
    assert "> 1/3" in text and "hard caps" in text


def test_cost_follows_each_models_price(built_suite: Path) -> None:
    dataset = load_dataset(built_suite, only=("retail_l1",))
    streams = plan_streams(["cheap", "dear"], ["blind"], [dataset.scenarios["retail_l1"]], learns=lambda _: False,
                           pilot=2)
    cheap, dear = Price(1.0, 0.1, 1.25, 4.0), Price(10.0, 1.0, 12.5, 40.0)
    cells = streams_work(streams, lambda _: False, {"cheap": cheap, "dear": dear})
    assert cells[0].turns == cells[1].turns
    assert cells[1].cost_usd == pytest.approx(10 * cells[0].cost_usd) and cells[0].cost_usd > 0

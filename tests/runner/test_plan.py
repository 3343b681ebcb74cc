from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from runner.cli import main
from runner.config.plan import pilot_note, plan_streams, serving_blocks
from simulators.dataset import load_dataset
from tests.fakes import toy_scenario


def test_blocks_restart_at_window_boundaries() -> None:
    scenario = toy_scenario(windows=2, serving_per_window=5)
    blocks = serving_blocks(scenario.serving, 3)
    assert [len(b) for b in blocks] == [3, 2, 3, 2]
    assert all(len({t.window for t in b}) == 1 for b in blocks)


def test_non_learning_methods_get_no_serving_stream_and_pilot_cuts_per_window() -> None:
    scenario = toy_scenario(windows=3, serving_per_window=5, test_per_window=4)
    streams = plan_streams(["m"], ["blind", "counting"], [scenario], learns=lambda n: n == "counting", pilot=2)
    blind, counting = streams
    assert blind.serving == () and len(blind.test) == 6
    assert len(counting.serving) == 6 and [t.window for t in counting.serving] == [0, 0, 1, 1, 2, 2]
    ids = [u.unit_id for s in streams for u in s.units()]
    assert len(ids) == len(set(ids))



def test_a_pilot_at_or_above_the_largest_window_says_it_is_the_full_sweep(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The largest window of either split, counted from the dataset's files rather than through the planner.
    names = ("retail_l1", "pitch_l1")
    files = {(name, split): built_suite / "data" / name / f"{split}.jsonl" for name in names
             for split in ("serving", "test")}
    sizes = Counter((*key, json.loads(line)["window"]) for key, path in files.items()
                    for line in path.read_text().splitlines())
    largest = max(sizes.values())
    scenarios = list(load_dataset(built_suite, only=names).scenarios.values())
    assert pilot_note(largest - 1, scenarios) is None and pilot_note(0, scenarios) is None
    for pilot in (largest, 100_000):
        assert pilot_note(pilot, scenarios) == (f"--pilot {pilot}: no window has more than {largest} tasks, so this "
                                                "pilot cuts nothing: it is the full sweep")
    # The run says it before anything else, and what it runs is the full sweep.
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "pitch_l1", "--methods", "blind", "--pilot",
                 "100000", "--display", "none", "--journal", str(journal)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("--pilot 100000: no window has more than") and first.endswith("it is the full sweep")
    with sqlite3.connect(journal) as db:
        planned = db.execute("SELECT count(*) FROM units").fetchone()[0]
    assert planned == sum(n for (name, split, _), n in sizes.items() if name == "pitch_l1" and split == "test")

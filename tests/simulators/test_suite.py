"""The built-in suite as a whole: `data build` is deterministic, `data check` reports FORMAT.md's counts."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from runner.cli import main
from simulators.dataset import fingerprint, load_dataset

# FORMAT.md: scenario -> (windows, serving, test)
TABLE = {
    "retail_l1": (6, 720, 384), "retail_l2": (7, 810, 765), "retail_l3": (8, 624, 537),
    "banking_l1": (4, 336, 178), "banking_l2": (5, 500, 387), "banking_l3": (6, 600, 551),
    "pitch_l1": (4, 216, 96), "pitch_l2": (6, 324, 144), "pitch_l3": (7, 378, 168),
}


@pytest.mark.slow
def test_same_seed_same_bytes_other_seed_differs(built_suite: Path, tmp_path: Path) -> None:
    assert main(["data", "build", "--out", str(tmp_path / "again"), "--seed", "0"]) == 0
    assert fingerprint(tmp_path / "again") == fingerprint(built_suite)
    assert main(["data", "build", "--out", str(tmp_path / "other"), "--seed", "1"]) == 0
    assert fingerprint(tmp_path / "other") != fingerprint(built_suite)


def test_check_reports_the_published_counts(built_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", str(built_suite), "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["fingerprint"] == fingerprint(built_suite)
    counts = {name: (s["windows"], s["serving"], s["test"]) for name, s in report["scenarios"].items()}
    assert counts == TABLE
    assert sum(s["serving"] + s["test"] for s in report["scenarios"].values()) == 7718
    for name, s in report["scenarios"].items():
        assert s["test_hidden"] + s["test_fully_specified"] == s["test"]
        if name.startswith("pitch"):
            assert s["test_fully_specified"] == 0


def test_every_retail_and_banking_window_tests_both_categories(built_suite: Path) -> None:
    dataset = load_dataset(built_suite)
    for name, scenario in dataset.scenarios.items():
        timestamps = [t.timestamp for t in scenario.serving]
        assert timestamps == list(range(1, len(timestamps) + 1)), name
        for window in scenario.environment.windows:
            tests = [t for t in scenario.test if t.window == window.window]
            assert tests, (name, window.window)
            last_serving = max(t.timestamp for t in scenario.serving if t.window == window.window)
            assert {t.timestamp for t in tests} == {last_serving}
            assert all(t.instruction.startswith(f"Current timestamp: {last_serving}\n\n") for t in tests)
            if not name.startswith("pitch"):
                assert {t.category for t in tests} == {"hidden", "fully_specified"}, (name, window.window)

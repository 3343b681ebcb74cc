"""Paired comparison on synthetic outcomes with known answers, and `compare --shared` on two real runs."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from scipy.stats import binomtest

from runner.cli import main
from runner.evidence.compare import compare_streams, render_comparison_json, render_comparison_text
from runner.stats.outcomes import Outcome, StreamRef
from runner.stats.slices import slices
from simulators.errors import ShiftbenchInputError

A = StreamRef("r1", "scripted", "tabular")
B = StreamRef("r1", "scripted", "blind")


def outcome(method: str, scenario: str, task: int, category: str, reward: float, turns: int = 4,
            cost: float = 0.0, repeat: int = 0) -> Outcome:
    return Outcome(model="scripted", method=method, scenario=scenario, task_id=f"t{task}", family=f"f{task % 4}",
                   category=category, window=task % 2, repeat=repeat, reward=reward, turns=turns, tool_calls=turns - 1,
                   input_tokens=100 * turns, output_tokens=10 * turns, cost_usd=cost, latency_s=0.1)


def test_known_wins_ties_losses_and_differences() -> None:
    # retail_l1 hidden: A wins 9, loses 2, ties 3 (14 tasks); fully specified: all tied.
    results = [(1.0, 0.0)] * 9 + [(0.0, 1.0)] * 2 + [(1.0, 1.0)] * 3
    a = [outcome("tabular", "retail_l1", i, "hidden", ra, turns=3) for i, (ra, _) in enumerate(results)]
    b = [outcome("blind", "retail_l1", i, "hidden", rb, turns=6) for i, (_, rb) in enumerate(results)]
    a += [outcome("tabular", "retail_l1", 100 + i, "fully_specified", 1.0) for i in range(4)]
    b += [outcome("blind", "retail_l1", 100 + i, "fully_specified", 1.0) for i in range(4)]
    comparison = compare_streams(A, a, B, b)
    h = comparison.settings["retail_l1"]["h"]
    assert (h.wins, h.ties, h.losses) == (9, 3, 2)
    assert h.diff == pytest.approx(100 * 7 / 14)
    assert round(h.sign_test_p, 4) == 0.0327
    assert comparison.avg_h == h  # one setting: the average is that setting
    # Four tied pairs: not a zero-wide [0.0, 0.0] but the exact bound on the share of pairs that could
    # differ (Clopper-Pearson, none of 4, from scipy), times the most a pair can differ by.
    bound = 100 * binomtest(0, 4).proportion_ci(0.95, "exact").high
    assert comparison.avg_f is not None and comparison.avg_f.diff == 0.0 and comparison.avg_f.ci is not None
    assert comparison.avg_f.ci.as_list() == pytest.approx([-bound, bound])
    turns = comparison.per_task["turns"]
    # hidden tasks: 3 vs 6 turns; specified: 4 vs 4 -> means (14*3 + 16) / 18 vs (14*6 + 16) / 18.
    assert turns.a == pytest.approx(58 / 18) and turns.b == pytest.approx(100 / 18)
    assert turns.r == pytest.approx((100 / 18 - 58 / 18) / (100 / 18))
    payload = orjson.loads(render_comparison_json(comparison))
    assert payload["a"] == "r1:scripted/tabular" and payload["avg_h"]["wins"] == 9
    assert set(payload["avg_h"]) >= {"diff", "ci", "wins", "ties", "losses", "sign_test_p"}
    assert payload["settings"]["retail_l1"]["f"]["diff"] == 0.0
    assert "Avg H" in render_comparison_text(comparison)


def test_repeats_are_averaged_per_task_before_pairing() -> None:
    a = [outcome("tabular", "pitch_l1", 1, "hidden", r, repeat=k) for k, r in enumerate([1.0, 0.0, 1.0, 1.0])]
    b = [outcome("blind", "pitch_l1", 1, "hidden", 0.5, repeat=k) for k in range(2)]
    comparison = compare_streams(A, a, B, b)
    assert comparison.pairs == 1 and comparison.avg_h is not None
    assert comparison.avg_h.diff == pytest.approx(25.0)


def test_a_figure_over_one_task_family_says_it_has_no_interval_in_text_and_json() -> None:
    # Every pitch task of a window is one family: its setting's draws never vary, and neither does Avg H.
    a = [replace(outcome("tabular", "pitch_l1", i, "hidden", 0.8), family="pitch") for i in range(6)]
    b = [replace(outcome("blind", "pitch_l1", i, "hidden", 0.5), family="pitch") for i in range(6)]
    comparison = compare_streams(A, a, B, b)
    assert comparison.avg_h is not None and comparison.avg_h.ci is None
    text = render_comparison_text(comparison)
    assert "no interval (1 family per setting)" in text and "pitch_l1 H" in text
    setting_line = next(line for line in text.splitlines() if line.startswith("pitch_l1 H"))
    assert "no interval (1 family)" in setting_line
    payload = orjson.loads(render_comparison_json(comparison))
    assert payload["avg_h"]["ci"] is None and payload["avg_h"]["ci_note"] == "no interval (1 family per setting)"
    assert payload["settings"]["pitch_l1"]["ci_note"] == "no interval (1 family)"  # its H figure


def test_different_task_sets_are_refused_in_one_line() -> None:
    a = [outcome("tabular", "retail_l1", i, "hidden", 1.0) for i in range(3)]
    b = [outcome("blind", "retail_l1", i, "hidden", 1.0) for i in range(2)]
    with pytest.raises(ShiftbenchInputError, match="did not finish the same test tasks") as caught:
        compare_streams(A, a, B, b)
    assert "\n" not in str(caught.value) and "retail_l1/t2" in str(caught.value)


def test_slices_count_and_score_by_bucket() -> None:
    rows = slices([outcome("blind", "retail_l1", 1, "hidden", 1.0, turns=2),
                   outcome("blind", "retail_l1", 2, "hidden", 0.0, turns=7),
                   outcome("blind", "retail_l1", 3, "fully_specified", 1.0, turns=30)])
    assert [(r.bucket, r.n, r.score) for r in rows["turns"]] == [("0-2", 1, 100.0), ("6-10", 1, 0.0),
                                                                ("21+", 1, 100.0)]
    assert [(r.bucket, r.n, r.score) for r in rows["category"]] == [("fully_specified", 1, 100.0),
                                                                   ("hidden", 2, 50.0)]
    assert [r.bucket for r in rows["tool_calls"]] == ["0-2", "6-10", "21+"]


def test_streams_over_different_scenarios_are_refused_naming_them_or_compared_on_their_shared_tasks() -> None:
    a = [outcome("tabular", scenario, i, "hidden", 1.0) for scenario in ("retail_l1", "banking_l1") for i in range(3)]
    b = [outcome("blind", scenario, i, "hidden", 0.0) for scenario in ("retail_l1", "pitch_l1") for i in range(3)]
    with pytest.raises(ShiftbenchInputError) as caught:
        compare_streams(A, a, B, b)
    assert str(caught.value).endswith("ran different scenarios (only A: banking_l1; only B: pitch_l1); "
                                      "`compare --shared` compares the 3 test tasks both finished")
    shared = compare_streams(A, a, B, b, shared=True)
    assert shared.pairs == 3 and shared.left_out == (3, 3) and list(shared.settings) == ["retail_l1"]
    assert shared.avg_h is not None and shared.avg_h.diff == 100.0 and shared.avg_h.wins == 3
    assert orjson.loads(render_comparison_json(shared))["shared"] == {"only_a": 3, "only_b": 3}
    assert "3 paired test tasks (--shared: the tasks both finished; 3 only in A and 3 only in B left out)" in \
        render_comparison_text(shared)
    assert orjson.loads(render_comparison_json(compare_streams(A, a[:3], B, b[:3])))["shared"] is None
    with pytest.raises(ShiftbenchInputError, match="have no finished test tasks in common"):
        compare_streams(A, a[3:], B, b[3:], shared=True)


def test_compare_shared_of_two_complete_runs_over_different_scenarios(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    for methods, scenarios in (("tabular", "retail_l1,banking_l1"), ("blind", "retail_l1,pitch_l1")):
        assert main(["run", "--dataset", str(built_suite), "--methods", methods, "--scenarios", scenarios,
                     "--pilot", "1", "--display", "none", "--journal", str(journal)]) == 0
    capsys.readouterr()
    with sqlite3.connect(journal) as db:
        a_run, b_run = (row[0] for row in db.execute("SELECT run_id FROM runs ORDER BY created_at"))
        (shared,) = db.execute("SELECT count(*) FROM units WHERE run_id = ? AND phase = 'test' AND scenario = "
                               "'retail_l1'", (a_run,)).fetchone()
    assert main(["compare", a_run, b_run, "--journal", str(journal)]) == 2
    err = capsys.readouterr().err
    assert f"ran different scenarios (only A: banking_l1; only B: pitch_l1); `compare --shared` compares the " \
           f"{shared} test tasks both finished" in err
    assert main(["compare", a_run, b_run, "--shared", "--json", "--journal", str(journal)]) == 0
    payload = orjson.loads(capsys.readouterr().out)
    assert payload["pairs"] == shared and list(payload["settings"]) == ["retail_l1"]
    assert payload["shared"]["only_a"] > 0 and payload["shared"]["only_b"] > 0

"""The evidence commands end to end: real sweeps of the built-in suite into a real journal, then
`compare`, `verify`, `gate`, `lock` and `run --plan` through the command line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import orjson
import pytest
from scipy.stats import binomtest

from runner.cli import main
from runner.config.settings import SweepConfig
from runner.schedule.sweep import start_sweep
from runner.stats.seal import is_sealed_intact
from tests.support import set_stored_reward

SCENARIOS = ("retail_l1", "banking_l1", "pitch_l1")


def sweep(dataset: Path, journal: Path, methods: tuple[str, ...], pilot: int = 0) -> str:
    config = SweepConfig(methods=methods, scenarios=SCENARIOS, dataset=str(dataset), pilot=pilot).validate("test")
    outcome = anyio.run(start_sweep, config, journal, "none", lambda line: None)
    assert outcome.status == "completed"
    return outcome.run_id


@pytest.fixture(scope="module")
def runs(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """One run of tabular and blind on three settings (one per domain), and a second run of blind."""
    journal = tmp_path_factory.mktemp("evidence") / "journal.sqlite"
    both = sweep(built_suite, journal, ("tabular", "blind"))
    blind_again = sweep(built_suite, journal, ("blind",))
    return journal, both, blind_again


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_tabular_beats_blind_with_an_interval_excluding_zero(runs: tuple[Path, str, str],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    journal, both, _ = runs
    code, out = run_cli(capsys, "compare", f"{both}:scripted/tabular", f"{both}:scripted/blind", "--json",
                        "--journal", str(journal))
    assert code == 0
    result = orjson.loads(out)
    avg_h = result["avg_h"]
    assert avg_h["diff"] > 0 and avg_h["ci"][0] > 0
    assert avg_h["sign_test_p"] < 0.001 and avg_h["wins"] > avg_h["losses"]
    assert set(result["settings"]) == set(SCENARIOS)
    assert result["a"] == f"{both}:scripted/tabular"


def test_blind_against_blind_is_zero(runs: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    journal, both, blind_again = runs
    code, out = run_cli(capsys, "compare", blind_again, f"{both}:scripted/blind", "--json", "--journal", str(journal))
    assert code == 0
    result = orjson.loads(out)
    # Every pair tied: not the bootstrap's zero-wide [0.0, 0.0] but the exact bound on the share of pairs
    # that could differ, per setting over its task families at the Bonferroni level, then averaged.
    families = families_of(journal, both)
    for figure, category, domains in ((result["avg_h"], "hidden", SCENARIOS),
                                      (result["avg_f"], "fully_specified", ("retail_l1", "banking_l1"))):
        level = 1 - 0.05 / len(domains)
        highs = [100 * binomtest(0, families[(name, category)]).proportion_ci(level, "exact").high for name in domains]
        bound = sum(highs) / len(highs)
        assert figure["diff"] == 0.0 and figure["ci"] == pytest.approx([-bound, bound])
        assert figure["wins"] == figure["losses"] == 0 and figure["sign_test_p"] == 1.0


def families_of(journal: Path, run_id: str) -> dict[tuple[str, str], int]:
    """Task families of each setting and category, counted from the journal's planned test units."""
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT scenario, category, COUNT(DISTINCT family) FROM units WHERE run_id = ? AND "
                          "phase = 'test' AND method = 'blind' GROUP BY scenario, category", (run_id,)).fetchall()
    return {(scenario, category): count for scenario, category, count in rows}


def test_compare_refuses_an_ambiguous_run_in_one_line(runs: tuple[Path, str, str],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    journal, both, blind_again = runs
    assert main(["compare", both, blind_again, "--journal", str(journal)]) == 2
    err = capsys.readouterr().err.strip()
    assert "has 2 streams" in err and "\n" not in err


def test_verify_passes_then_flags_one_altered_reward(runs: tuple[Path, str, str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    journal, _, blind_again = runs
    copy = tmp_path / "journal.sqlite"
    copy.write_bytes(journal.read_bytes())
    code, out = run_cli(capsys, "verify", blind_again, "--journal", str(copy))
    assert code == 0 and "re-grade equal" in out
    unit = anyio.run(set_stored_reward, copy, blind_again, 0.5)
    code, out = run_cli(capsys, "verify", blind_again, "--json", "--journal", str(copy))
    assert code == 1
    mismatches = orjson.loads(out)["mismatches"]
    assert [m["unit_id"] for m in mismatches] == [unit] and mismatches[0]["stored"] == 0.5


RULES = {
    "PASS": '[[rule]]\nmetric = "diff.avg_h"\nstream = "scripted/tabular"\nbase = "scripted/blind"\nmin = 1\n',
    "FAIL": '[[rule]]\nmetric = "avg_h"\nstream = "scripted/blind"\nmin = 99.5\n',
    "INSUFFICIENT_EVIDENCE": '[[rule]]\nmetric = "setting.{setting}.h"\nstream = "scripted/{method}"\nmin = {bar}\n',
    "PROCEED": '[pilot]\nbase = "scripted/blind"\ntreat = "scripted/tabular"\nmeasure = "turns"\n'
               'min_median_r = -1.0\nmin_pairs = 10\nbudget = 1.0\n',
    "STOP": '[pilot]\nbase = "scripted/blind"\ntreat = "scripted/tabular"\nmeasure = "turns"\n'
            'min_median_r = 0.99\nmin_pairs = 10\nbudget = 1.0\n',
}


@pytest.mark.parametrize(("verdict", "code"), [("PASS", 0), ("FAIL", 1), ("INSUFFICIENT_EVIDENCE", 3),
                                               ("PROCEED", 0), ("STOP", 1)])
def test_each_gate_verdict_with_its_exit_code(runs: tuple[Path, str, str], tmp_path: Path, verdict: str,
                                              code: int, capsys: pytest.CaptureFixture[str]) -> None:
    journal, both, _ = runs
    fields = {"bar": 0.0, "setting": "", "method": ""}
    if verdict == "INSUFFICIENT_EVIDENCE":
        # A bar inside a setting's interval: its point estimate plus a hair.
        _, out = run_cli(capsys, "report", both, "--json", "--journal", str(journal))
        method, setting, figures = next((s["method"], name, setting) for s in orjson.loads(out)["streams"]
                                        for name, setting in s["settings"].items()
                                        if isinstance(setting["hidden_ci"], list)
                                        and setting["hidden_ci"][0] < setting["hidden_ci"][1] and
                                        setting["hidden_ci"][0] <= setting["hidden"] < setting["hidden_ci"][1])
        fields = {"bar": figures["hidden"] + 1e-6, "setting": setting, "method": method}
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES[verdict].format(**fields))
    got, out = run_cli(capsys, "gate", both, "--rules", str(rules), "--json", "--journal", str(journal))
    assert (got, orjson.loads(out)["verdict"]) == (code, verdict)


PLAN = """\
[plan]
comparison = ["scripted/blind", "scripted/oracle"]
metric = "avg_h"
threshold = 0.0
test = "sign_test"

[sweep]
methods = ["blind"]
scenarios = ["retail_l1"]
pilot = 2
dataset = "{dataset}"
"""


def test_a_plan_refuses_a_change_until_an_amendment_covers_it(built_suite: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    plan, journal = tmp_path / "PLAN.toml", tmp_path / "journal.sqlite"
    plan.write_text(PLAN.format(dataset=built_suite))
    code, out = run_cli(capsys, "lock", str(plan))
    assert code == 0 and out.startswith(f"Locked {plan}: sha256 ")
    locked_hash = out.split()[-1]

    assert main(["run", "--plan", str(plan), "--pilot", "3", "--journal", str(journal), "--display", "none"]) == 2
    err = capsys.readouterr().err.strip()
    assert "differs from the locked plan (pilot -> 3)" in err and "\n" not in err
    assert not journal.exists()  # nothing written

    code, out = run_cli(capsys, "lock", str(plan), "--amend", "three tasks a window: two were too few", "--pilot", "3")
    assert code == 0 and "Amended" in out
    amendment_hash = out.split()[-1]
    assert main(["run", "--plan", str(plan), "--journal", str(journal), "--display", "none"]) == 0
    capsys.readouterr()
    code, out = run_cli(capsys, "runs", "--json", "--journal", str(journal))
    run_id = orjson.loads(out)[0]["run_id"]
    code, out = run_cli(capsys, "report", run_id, "--json", "--journal", str(journal))
    report = orjson.loads(out)
    plan_shown = report["provenance"]["plan"]
    assert plan_shown["hash"] == locked_hash and plan_shown["head"] == amendment_hash
    assert plan_shown["amendments"][0]["reason"] == "three tasks a window: two were too few"
    assert plan_shown["amendments"][0]["sets"] == {"pilot": 3}
    code, out = run_cli(capsys, "report", run_id, "--journal", str(journal))
    assert amendment_hash[:12] in out and "three tasks a window" in out


def test_report_is_sealed_and_slices_are_descriptive(runs: tuple[Path, str, str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    journal, both, _ = runs
    _, out = run_cli(capsys, "report", both, "--json", "--journal", str(journal))
    report = orjson.loads(out)
    assert is_sealed_intact(report)
    assert report["provenance"]["dataset_fingerprint"] and report["provenance"]["machine"]["cpus"] >= 1
    stream = report["streams"][0]
    assert stream["avg_h_ci"][0] <= stream["avg_h"] <= stream["avg_h_ci"][1]
    assert sum(row["n"] for row in stream["slices"]["category"]) == stream["test_done"]
    _, text = run_cli(capsys, "report", both, "--slices", "--journal", str(journal))
    assert "Slices (descriptive only" in text and "H interval" in text


def test_compare_refuses_runs_of_different_datasets(runs: tuple[Path, str, str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    journal, _, blind_again = runs
    copy = tmp_path / "journal.sqlite"
    copy.write_bytes(journal.read_bytes())
    official = Path(__file__).parents[2] / "fixtures" / "official"
    config = SweepConfig(methods=("blind",), scenarios=("retail_l1",), dataset=str(official)).validate("test")
    other = anyio.run(start_sweep, config, copy, "none", lambda line: None).run_id
    assert main(["compare", blind_again, other, "--journal", str(copy)]) == 2
    err = capsys.readouterr().err.strip()
    assert "ran on different datasets" in err and "\n" not in err

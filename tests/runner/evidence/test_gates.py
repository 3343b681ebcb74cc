"""Gate verdicts from intervals, the pilot rule, and the rules file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from runner.evidence.gates import (
    EXIT_CODES,
    MetricValue,
    PilotRule,
    Rule,
    Verdict,
    decide_pilot,
    evaluate_rule,
    load_rules,
    overall_verdict,
)
from runner.stats.bootstrap import Interval
from simulators.errors import ShiftbenchInputError

AT_LEAST_60 = Rule(metric="avg_h", stream="scripted/tabular", bar=60.0, side="min")
AT_MOST_002 = Rule(metric="cost_per_task", stream="scripted/tabular", bar=0.02, side="max")


def test_min_rule_verdicts_follow_the_interval() -> None:
    assert evaluate_rule(AT_LEAST_60, MetricValue(70.0, Interval(62.0, 78.0), 100)).verdict is Verdict.PASS
    assert evaluate_rule(AT_LEAST_60, MetricValue(50.0, Interval(42.0, 58.0), 100)).verdict is Verdict.FAIL
    unsure = evaluate_rule(AT_LEAST_60, MetricValue(64.0, Interval(56.0, 72.0), 100))
    assert unsure.verdict is Verdict.INSUFFICIENT_EVIDENCE
    # half-width 8, distance 4: 100 * (8 / 4)^2 = 400 cases settle it, 300 more than now.
    assert unsure.more_cases == 300


def test_max_rule_and_measured_metrics() -> None:
    assert evaluate_rule(AT_MOST_002, MetricValue(0.01, None, 50)).verdict is Verdict.PASS
    assert evaluate_rule(AT_MOST_002, MetricValue(0.03, None, 50)).verdict is Verdict.FAIL
    assert evaluate_rule(AT_MOST_002, MetricValue(0.019, Interval(0.015, 0.025), 50)).verdict is \
        Verdict.INSUFFICIENT_EVIDENCE


def test_nothing_measured_or_estimate_on_the_bar_cannot_be_settled_by_a_count() -> None:
    nothing = evaluate_rule(AT_LEAST_60, MetricValue(None, None, 0))
    assert nothing.verdict is Verdict.INSUFFICIENT_EVIDENCE and nothing.more_cases is None
    on_bar = evaluate_rule(AT_LEAST_60, MetricValue(60.0, Interval(55.0, 65.0), 40))
    assert on_bar.verdict is Verdict.INSUFFICIENT_EVIDENCE and on_bar.more_cases is None


def test_overall_is_the_worst_and_exit_codes_are_distinct() -> None:
    assert overall_verdict([Verdict.PASS, Verdict.PASS]) is Verdict.PASS
    assert overall_verdict([Verdict.PASS, Verdict.INSUFFICIENT_EVIDENCE]) is Verdict.INSUFFICIENT_EVIDENCE
    assert overall_verdict([Verdict.INSUFFICIENT_EVIDENCE, Verdict.FAIL]) is Verdict.FAIL
    assert overall_verdict([Verdict.PASS, Verdict.PROCEED]) is Verdict.PASS
    assert overall_verdict([Verdict.PROCEED]) is Verdict.PROCEED
    assert overall_verdict([Verdict.PASS, Verdict.STOP]) is Verdict.STOP
    assert (EXIT_CODES[Verdict.PASS], EXIT_CODES[Verdict.FAIL], EXIT_CODES[Verdict.INSUFFICIENT_EVIDENCE]) == (0, 1, 3)
    assert (EXIT_CODES[Verdict.PROCEED], EXIT_CODES[Verdict.STOP]) == (0, 1)


PILOT = PilotRule(base="scripted/blind", treat="scripted/tabular", measure="turns", min_median_r=0.1,
                  min_pairs=5, budget_usd=10.0)


def test_pilot_proceeds_only_when_effect_pairs_and_cost_all_hold() -> None:
    good = decide_pilot(PILOT, [0.2, 0.3, 0.1, 0.5, 0.0, 0.25], projected_usd=4.0)
    assert good.verdict is Verdict.PROCEED and good.median_r == pytest.approx(0.225) and good.pairs == 6
    weak = decide_pilot(PILOT, [0.0, 0.05, 0.1, -0.2, 0.0], projected_usd=4.0)
    assert weak.verdict is Verdict.STOP and weak.reasons == ("median r 0.000 < 0.1",)
    few = decide_pilot(PILOT, [0.5, 0.5], projected_usd=4.0)
    assert few.verdict is Verdict.STOP and few.reasons == ("2 usable pairs < 5",)
    dear = decide_pilot(PILOT, [0.5] * 6, projected_usd=12.5)
    assert dear.verdict is Verdict.STOP and dear.reasons == ("projected $12.50 > remaining budget $10.00",)


def test_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text('[[rule]]\nmetric = "diff.avg_h"\nstream = "scripted/tabular"\nbase = "scripted/blind"\n'
                    'min = 5\n\n[pilot]\nbase = "scripted/blind"\ntreat = "scripted/tabular"\nmeasure = "turns"\n'
                    'min_median_r = 0.1\nmin_pairs = 20\nbudget = 50\n')
    rules = load_rules(path)
    assert rules.rules[0].bar == 5.0 and rules.rules[0].side == "min" and rules.rules[0].base == "scripted/blind"
    assert rules.pilot is not None and rules.pilot.min_pairs == 20


@pytest.mark.parametrize(("text", "message"), [
    ('[[rule]]\nmetric = "avg_h"\nstream = "s/m"\n', "give exactly one of min or max"),
    ('[[rule]]\nmetric = "avg_h"\nstream = "s/m"\nmin = 1\nmax = 2\n', "give exactly one of min or max"),
    ('[[rule]]\nmetric = "diff.avg_h"\nstream = "s/m"\nmin = 1\n', "name its base stream"),
    ('[[rule]]\nmetric = "avg_h"\nstream = "s/m"\nmni = 1\n', "unknown key 'mni'"),
    ('[pilot]\nbase = "a/b"\ntreat = "a/c"\nmeasure = "latency"\nmin_median_r = 0.1\nmin_pairs = 3\nbudget = 1\n',
     "measure must be one of"),
    ('', "nothing to gate on"),
    ('[[rule]\n', "not valid TOML"),
])
def test_bad_rules_are_one_line_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(text)
    with pytest.raises(ShiftbenchInputError, match=message) as caught:
        load_rules(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_the_models_that_bill_nothing_are_the_unpriced_and_the_all_zero(tmp_path: Path,
                                                                       built_suite: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli import main
    from runner.evidence.run_evidence import _unbilled

    zero = {"input": 0.0, "cached_input": 0.0, "cache_write": 0.0, "output": 0.0, "cache_write_1h": None}
    paid = {**zero, "output": 1.0}
    assert _unbilled({"a": {"price_per_million_tokens": None}, "b": {"price_per_million_tokens": zero},
                      "c": {"price_per_million_tokens": paid}}) == frozenset({"a", "b"})
    # Through the CLI on a real offline run: the rule is INSUFFICIENT_EVIDENCE (exit 3), saying why.
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "pitch_l1", "--methods", "blind",
                 "--pilot", "1", "--display", "none", "--journal", str(journal)]) == 0
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nmetric = "cost_per_task"\nstream = "scripted/blind"\nmax = 0.01\n')
    with sqlite3.connect(journal) as db:
        run_id = db.execute("SELECT run_id FROM runs").fetchone()[0]
    capsys.readouterr()
    assert main(["gate", run_id, "--rules", str(rules), "--journal", str(journal), "--json"]) == 3
    (result,) = json.loads(capsys.readouterr().out)["rules"]
    assert result["verdict"] == "INSUFFICIENT_EVIDENCE" and result["estimate"] is None
    assert result["why"].startswith("scripted reports no cost")

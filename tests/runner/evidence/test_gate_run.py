"""Gate rules resolved on a run's outcomes: every verdict, with its exit code."""

from __future__ import annotations

import pytest

from runner.evidence.gate_run import gate_run, reductions, render_gate_json, render_gate_text
from runner.evidence.gates import GateFile, PilotRule, Rule, Verdict
from runner.report import Costs, StreamReport
from runner.stats.outcomes import Outcome, RunEvidence
from simulators.errors import ShiftbenchInputError


def outcome(method: str, task: int, reward: float, turns: int) -> Outcome:
    return Outcome(model="scripted", method=method, scenario="retail_l1", task_id=f"t{task}", family=f"f{task // 10}",
                   category="hidden", window=0, repeat=0, reward=reward, turns=turns, tool_calls=turns,
                   input_tokens=0, output_tokens=0, cost_usd=0.0, latency_s=0.0)


def evidence() -> RunEvidence:
    # Ten families of ten tasks. tabular solves 60, 70, 80, 90, 100, 60, ... % of a family's tasks (80 in
    # all), blind 2 of every 10; tabular takes 3 turns, blind 4.
    tabular = [outcome("tabular", i, 1.0 if i % 10 < 6 + (i // 10) % 5 else 0.0, 3) for i in range(100)]
    blind = [outcome("blind", i, 1.0 if i % 10 < 2 else 0.0, 4) for i in range(100)]
    return RunEvidence("r1", "fp", "0.1.0", "h", {("scripted", "tabular"): tabular, ("scripted", "blind"): blind})


def stream(method: str) -> StreamReport:
    return StreamReport(model="scripted", method=method, complete=True, avg_h=None, avg_f=None, settings={},
                        test_done=100, test_planned=100, episodes=100, input_tokens=0, output_tokens=0,
                        input_tokens_per_task=None, output_tokens_per_task=None, cost_usd=Costs(total=1.0),
                        cost_per_task_usd=Costs(total=0.01), latency_p50_s=1.0, latency_p95_s=2.0)


STREAMS = {"scripted/tabular": stream("tabular"), "scripted/blind": stream("blind")}


def rule(metric: str, side: str, bar: float, base: str = "") -> Rule:
    return Rule(metric=metric, stream="scripted/tabular", bar=bar, side=side, base=base)


@pytest.mark.parametrize(("rules", "verdict", "code"), [
    ((rule("avg_h", "min", 65), rule("diff.avg_h", "min", 40, "scripted/blind")), Verdict.PASS, 0),
    ((rule("avg_h", "min", 95),), Verdict.FAIL, 1),
    ((rule("setting.retail_l1.h", "min", 80),), Verdict.INSUFFICIENT_EVIDENCE, 3),
    ((rule("cost_per_task", "max", 0.02), rule("latency_p95", "max", 1.5)), Verdict.FAIL, 1),
])
def test_each_rule_verdict_and_exit_code(rules: tuple[Rule, ...], verdict: Verdict, code: int) -> None:
    outcome_ = gate_run(evidence(), STREAMS, GateFile(rules, None), projected_usd=0.0)
    assert outcome_.verdict is verdict and outcome_.exit_code == code
    assert verdict.value in render_gate_text(outcome_) and f'"exit_code": {code}' in render_gate_json(outcome_)


def test_pilot_proceeds_and_stops() -> None:
    pilot = PilotRule(base="scripted/blind", treat="scripted/tabular", measure="turns", min_median_r=0.2,
                      min_pairs=50, budget_usd=10.0)
    proceed = gate_run(evidence(), STREAMS, GateFile((), pilot), projected_usd=5.0)
    assert proceed.verdict is Verdict.PROCEED and proceed.exit_code == 0
    assert proceed.pilot is not None and proceed.pilot.median_r == pytest.approx(0.25) and proceed.pilot.pairs == 100
    stop = gate_run(evidence(), STREAMS, GateFile((), pilot), projected_usd=50.0)
    assert stop.verdict is Verdict.STOP and stop.exit_code == 1
    assert "projected $50.00 > remaining budget $10.00" in render_gate_text(stop)


def test_reductions_pair_tasks_done_by_both() -> None:
    base = [outcome("blind", i, 0.0, 10) for i in range(3)]
    treat = [outcome("tabular", i, 0.0, 5) for i in range(2)]
    assert reductions(base, treat, "turns") == [0.5, 0.5]


def test_unknown_stream_or_metric_is_one_line() -> None:
    with pytest.raises(ShiftbenchInputError, match="no stream 'scripted/rag'"):
        gate_run(evidence(), STREAMS, GateFile((Rule("avg_h", "scripted/rag", 1.0, "min"),), None), 0.0)
    with pytest.raises(ShiftbenchInputError, match="unknown metric 'avg_x'"):
        gate_run(evidence(), STREAMS, GateFile((rule("avg_x", "min", 1.0),), None), 0.0)


def free_stream(cost_per_task: float) -> StreamReport:
    return StreamReport(model="scripted", method="tabular", complete=True, avg_h=None, avg_f=None, settings={},
                        test_done=100, test_planned=100, episodes=212, input_tokens=0, output_tokens=0,
                        input_tokens_per_task=None, output_tokens_per_task=None,
                        cost_usd=Costs(total=cost_per_task * 212), cost_per_task_usd=Costs(total=cost_per_task),
                        latency_p50_s=1.0, latency_p95_s=2.0)


@pytest.mark.parametrize(("unbilled", "cost", "verdict"), [
    (frozenset({"scripted"}), 0.0, Verdict.INSUFFICIENT_EVIDENCE),  # $0 by construction: no measurement
    (frozenset({"scripted"}), 0.03, Verdict.FAIL),  # an unpriced model whose provider reported a cost: judged
    (frozenset(), 0.0, Verdict.PASS),  # a paid model that happened to spend nothing is measured
])
def test_a_cost_rule_on_a_model_that_reports_no_cost_is_insufficient_evidence(
        unbilled: frozenset[str], cost: float, verdict: Verdict) -> None:
    streams = {"scripted/tabular": free_stream(cost)}
    gated = gate_run(evidence(), streams, GateFile((rule("cost_per_task", "max", 0.02),), None), 0.0,
                     unbilled=unbilled)
    assert gated.verdict is verdict
    text = render_gate_text(gated)
    assert ("scripted reports no cost (offline, unpriced or priced at $0)" in text) is (
        verdict is Verdict.INSUFFICIENT_EVIDENCE)
    assert "over 212 cases" in text

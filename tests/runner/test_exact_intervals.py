"""Numbers as sure as their data (issue 30 item 4): no bootstrap interval from too few task families,
and where every task agrees the exact interval, checked against scipy's Clopper-Pearson, never a
zero-wide [100.0, 100.0] or [0.0, 0.0]."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from runner.evidence.gate_run import gate_run, render_gate_text
from runner.evidence.gates import GateFile, Rule, Verdict
from runner.report import Costs, StreamReport
from runner.stats.bootstrap import Interval, TaskValue, interval, stream_draws
from runner.stats.exact import MIN_FAMILIES, too_few
from runner.stats.outcomes import Outcome, RunEvidence

LEVEL = 0.95


def cp(successes: int, trials: int, level: float = LEVEL) -> tuple[float, float]:
    found = binomtest(successes, trials).proportion_ci(confidence_level=level, method="exact")
    return 100 * found.low, 100 * found.high


def tasks(setting: str, families: int, per_family: int, value: float, category: str = "hidden") -> list[TaskValue]:
    return [TaskValue(setting, f"{setting}-{f}-{i}", f"fam{f}", category, f % 3, value)
            for f in range(families) for i in range(per_family)]


def test_too_few_families_say_so_in_the_count_they_have() -> None:
    assert too_few(1, 4) == "no interval (1 family)"
    assert too_few(2, 2) == "2 tasks: too few for an interval"
    assert too_few(2, 7) == "2 families: too few for an interval"
    assert too_few(MIN_FAMILIES, MIN_FAMILIES) is None and too_few(0, 0) is None


@pytest.mark.parametrize("families", [MIN_FAMILIES, 8, 40])
def test_every_task_at_100_or_0_gets_the_clopper_pearson_interval_over_its_families(families: int) -> None:
    full = stream_draws(tasks("retail_l1", families, 3, 100.0))
    found = full.decided("retail_l1", ("hidden", None))
    assert isinstance(found, Interval) and (found.lo, found.hi) == pytest.approx(cp(families, families))
    assert found.lo < 100.0  # never the zero-wide [100.0, 100.0] the bootstrap gives
    none = stream_draws(tasks("retail_l1", families, 3, 0.0)).decided("retail_l1", ("hidden", None))
    assert isinstance(none, Interval) and (none.lo, none.hi) == pytest.approx(cp(0, families))


def test_every_pair_tied_is_bounded_by_the_share_of_pairs_that_could_differ() -> None:
    tied = stream_draws(tasks("banking_l1", 9, 2, 0.0), paired=True).decided("banking_l1", ("hidden", None))
    high = cp(0, 9)[1]
    assert isinstance(tied, Interval) and (tied.lo, tied.hi) == pytest.approx((-high, high))


@pytest.mark.parametrize("sign", [1, -1])
def test_every_pair_at_the_full_difference_is_bounded_by_the_share_that_could_fall_short(sign: int) -> None:
    found = stream_draws(tasks("retail_l1", 13, 3, sign * 100.0), paired=True).decided("retail_l1", ("hidden", None))
    least = cp(13, 13)[0] / 100  # the share of pairs at the full difference, at least
    expected = (100 * least - 100 * (1 - least), 100.0)
    assert isinstance(found, Interval)
    assert (found.lo, found.hi) == pytest.approx(expected if sign > 0 else (-expected[1], -expected[0]))


def test_a_common_value_with_no_exact_bound_says_all_agree_and_a_varied_one_keeps_the_bootstrap() -> None:
    assert stream_draws(tasks("pitch_l1", 6, 2, 40.0)).decided("pitch_l1", ("hidden", None)) == "all 12 tasks agree"
    varied = tasks("pitch_l1", 6, 2, 40.0)
    varied[0] = TaskValue(*list(vars(varied[0]).values())[:-1], 60.0)
    assert stream_draws(varied).decided("pitch_l1", ("hidden", None)) is None


def test_an_average_over_agreeing_settings_takes_each_bound_at_the_bonferroni_level() -> None:
    draws = stream_draws([*tasks("retail_l1", 6, 2, 100.0), *tasks("banking_l1", 10, 1, 0.0)])
    found = draws.decided_avg("hidden")
    level = 1 - (1 - LEVEL) / 2
    (lo_r, hi_r), (lo_b, hi_b) = cp(6, 6, level), cp(0, 10, level)
    assert isinstance(found, Interval) and (found.lo, found.hi) == pytest.approx(((lo_r + lo_b) / 2, (hi_r + hi_b) / 2))
    # A setting with fewer families than the minimum: the average has no interval, and says which.
    thin = stream_draws([*tasks("retail_l1", 2, 1, 100.0), *tasks("banking_l1", 10, 1, 0.0)])
    assert thin.decided_avg("hidden") == "retail_l1: 2 tasks: too few for an interval"


def test_an_average_over_some_agreeing_settings_averages_exact_and_percentile_bounds() -> None:
    # The agreeing setting's draws never vary: a plain bootstrap of the average would take no width from it.
    varied = [TaskValue("banking_l1", f"b{i}", f"fam{i}", "hidden", 0, 100.0 * (i % 2)) for i in range(12)]
    draws = stream_draws([*tasks("retail_l1", 6, 2, 100.0), *varied])
    level = 1 - (1 - LEVEL) / 2
    lo_r, hi_r = cp(6, 6, level)
    percentile = interval(draws.settings["banking_l1"][("hidden", None)], level)
    assert percentile is not None
    found = draws.decided_avg("hidden")
    assert isinstance(found, Interval)
    assert (found.lo, found.hi) == pytest.approx(((lo_r + percentile.lo) / 2, (hi_r + percentile.hi) / 2))


def outcome(method: str, task: int, reward: float) -> Outcome:
    return Outcome(model="scripted", method=method, scenario="banking_l1", task_id=f"t{task}", family=f"f{task}",
                   category="hidden", window=0, repeat=0, reward=reward, turns=3, tool_calls=3,
                   input_tokens=0, output_tokens=0, cost_usd=0.0, latency_s=0.0)


def report(method: str) -> StreamReport:
    return StreamReport(model="scripted", method=method, complete=True, avg_h=None, avg_f=None, settings={},
                        test_done=2, test_planned=2, episodes=2, input_tokens=0, output_tokens=0,
                        input_tokens_per_task=None, output_tokens_per_task=None, cost_usd=Costs(total=0.0),
                        cost_per_task_usd=Costs(total=0.0), latency_p50_s=1.0, latency_p95_s=2.0)


def test_a_gate_on_two_paired_tasks_is_insufficient_evidence_not_a_pass_on_a_zero_wide_interval() -> None:
    # The case: `banking_l1 H +0.0 [0.0, 0.0]` from 2 paired tasks, both tied.
    evidence = RunEvidence("r1", "fp", "0.1.0", "h", {("scripted", "a"): [outcome("a", i, 1.0) for i in range(2)],
                                                       ("scripted", "b"): [outcome("b", i, 1.0) for i in range(2)]})
    rule = Rule(metric="diff.banking_l1.h", stream="scripted/a", bar=-5.0, side="min", base="scripted/b")
    gated = gate_run(evidence, {"scripted/a": report("a"), "scripted/b": report("b")}, GateFile((rule,), None), 0.0)
    assert gated.verdict is Verdict.INSUFFICIENT_EVIDENCE
    assert "2 tasks: too few for an interval" in render_gate_text(gated)


def test_gate_and_compare_print_one_difference_with_the_same_digits() -> None:
    from runner.evidence.compare import compare_streams
    from runner.stats.outcomes import StreamRef
    from tests.runner.evidence.test_gate_run import STREAMS, evidence

    found = evidence()
    rule = Rule(metric="diff.avg_h", stream="scripted/tabular", bar=10.0, side="min", base="scripted/blind")
    gated = render_gate_text(gate_run(found, STREAMS, GateFile((rule,), None), 0.0))
    a, b = (StreamRef("r1", "scripted", method) for method in ("tabular", "blind"))
    compared = compare_streams(a, found.outcomes[("scripted", "tabular")], b, found.outcomes[("scripted", "blind")])
    assert compared.avg_h is not None
    assert f"{compared.avg_h.diff:.1f} {compared.avg_h.ci_text} over" in gated, (gated, compared.avg_h.ci_text)

"""`shiftbench gate`: a run's figures, with their intervals, against a rules file.

Metrics a rule may name (of its `stream`, `model/method` of the gated run):
- `avg_h`, `avg_f`, `setting.<scenario>.h`, `setting.<scenario>.f`: scores with family bootstrap intervals;
- `diff.avg_h`, `diff.avg_f`, `diff.<scenario>.h|f`: the paired difference stream - `base`;
- `cost_per_task` (USD, all purposes, per finished episode) and `latency_p95` (seconds): measured, so
  judged on their value;
- `audit.state_match`, `audit.state_unchanged`, `audit.safe_writes`: the state audits' rates x 100 over
  the stream's retail and banking episodes, with exact Clopper-Pearson intervals (`runner.audits.rates`);
- `mde.avg_h`, `mde.avg_f` (with `max`): the achieved MDE at 80% power across the stream's replicas;
  PASS when it is at most the bar, INSUFFICIENT_EVIDENCE otherwise (or with one replica), with about
  how many more replicas would reach it.
The pilot rule's r is taken per paired test task over `measure` (less is better) of `base` against
`treat`; the projected cost is the run's spend per finished episode times the full sweep's tasks, with
the pilot margin.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from runner.audits.rates import AUDIT_METRICS
from runner.evidence.gates import (
    EXIT_CODES,
    GateFile,
    MetricValue,
    PilotDecision,
    Rule,
    RuleResult,
    Verdict,
    decide_pilot,
    evaluate_mde_rule,
    evaluate_rule,
    overall_verdict,
)
from runner.report import StreamReport
from runner.stats.bootstrap import (
    DEFAULT_SPEC,
    BootstrapSpec,
    Cell,
    Interval,
    StreamDraws,
    paired_values,
    stream_draws,
)
from runner.stats.compare_replicas import paired_intervals
from runner.stats.outcomes import MEASURES, Outcome, RunEvidence, by_task, task_values
from runner.stats.replicated import Intervals, stream_intervals
from runner.stats.stats import relative_reduction
from simulators.errors import ShiftbenchInputError

__all__ = ["GateOutcome", "gate_run", "render_gate_json", "render_gate_text"]

_CATEGORY = {"h": "hidden", "f": "fully_specified"}


@dataclass(frozen=True)
class GateOutcome:
    run_id: str
    results: tuple[RuleResult, ...]
    pilot: PilotDecision | None
    verdict: Verdict

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]


def gate_run(evidence: RunEvidence, streams: Mapping[str, StreamReport], rules: GateFile,
             projected_usd: float, spec: BootstrapSpec = DEFAULT_SPEC,
             unbilled: frozenset[str] = frozenset()) -> GateOutcome:
    """`streams`: the run's report streams by `model/method` (cost and latency come from there);
    `unbilled`: the models whose calls bill nothing (no price, or every rate 0)."""
    results = tuple(evaluate_mde_rule(rule, _mde(rule, evidence, streams)) if rule.metric.startswith("mde.")
                    else evaluate_rule(rule, _metric(rule, evidence, streams, spec, unbilled))
                    for rule in rules.rules)
    pilot = None
    if rules.pilot is not None:
        base = evidence.stream(rules.pilot.base, "[pilot] base")[1]
        treat = evidence.stream(rules.pilot.treat, "[pilot] treat")[1]
        pilot = decide_pilot(rules.pilot, reductions(base, treat, rules.pilot.measure), projected_usd)
    verdicts = [r.verdict for r in results] + ([pilot.verdict] if pilot else [])
    return GateOutcome(evidence.run_id, results, pilot, overall_verdict(verdicts))


def reductions(base: list[Outcome], treat: list[Outcome], measure: str) -> list[float]:
    """r per test task done by both streams (the usable pairs), repeats averaged first."""
    read = MEASURES[measure]
    base_tasks, treat_tasks = by_task(base), by_task(treat)
    result = []
    for key in sorted(base_tasks.keys() & treat_tasks.keys()):
        b = sum(read(o) for o in base_tasks[key]) / len(base_tasks[key])
        t = sum(read(o) for o in treat_tasks[key]) / len(treat_tasks[key])
        result.append(relative_reduction(b, t))
    return result


def _metric(rule: Rule, evidence: RunEvidence, streams: Mapping[str, StreamReport],
            spec: BootstrapSpec, unbilled: frozenset[str] = frozenset()) -> MetricValue:
    where = f"rule {rule.label!r}"
    ref, outcomes = evidence.stream(rule.stream, where)
    if rule.metric == "cost_per_task":
        return _cost_per_task(streams[rule.stream], unbilled)
    if rule.metric == "latency_p95":
        report = streams[rule.stream]
        return MetricValue(report.latency_p95_s, None, report.episodes)
    if rule.metric.startswith("audit."):
        return _audit_metric(rule, streams, where)
    if rule.metric.startswith("diff."):
        base_ref, base = evidence.stream(rule.base, where)
        try:
            values = paired_values(task_values(outcomes), task_values(base))
        except ValueError:
            raise ShiftbenchInputError(f"{where}: {rule.stream} and {rule.base} did not finish the same test "
                                       "tasks; a paired difference needs both") from None
        return _score(stream_draws(values, spec, paired=True), rule.metric.removeprefix("diff."), where,
                      paired_intervals(ref, outcomes, base_ref, base, spec))
    # With replicas, the interval is the two-level one the report gives (points and cases are the same).
    return _score(stream_draws(task_values(outcomes), spec), rule.metric, where, stream_intervals(outcomes, spec))


def _cost_per_task(report: StreamReport, unbilled: frozenset[str]) -> MetricValue:
    value = report.cost_per_task_usd.total if report.cost_per_task_usd else None
    if report.model in unbilled and not value:
        # $0 by construction, not by measurement: "0 over 212 cases" would PASS any cost bar.
        return MetricValue(None, None, report.episodes,
                           missing=f"{report.model} reports no cost (offline, unpriced or priced at $0), so its "
                                   "cost per task is not measured")
    return MetricValue(value, None, report.episodes)


def _mde(rule: Rule, evidence: RunEvidence, streams: Mapping[str, StreamReport]) -> MetricValue:
    """The stream's achieved MDE across its replicas (`runner.stats.noise`); none with one replica."""
    where = f"rule {rule.label!r}"
    evidence.stream(rule.stream, where)
    if rule.metric not in ("mde.avg_h", "mde.avg_f"):
        raise ShiftbenchInputError(f"{where}: unknown metric {rule.metric!r}; use mde.avg_h or mde.avg_f")
    noise = streams[rule.stream].noise
    if noise is None:
        return MetricValue(None, None, streams[rule.stream].stream_replicas)
    return MetricValue(noise.mde_avg_h if rule.metric == "mde.avg_h" else noise.mde_avg_f, None, noise.replicas)


def _audit_metric(rule: Rule, streams: Mapping[str, StreamReport], where: str) -> MetricValue:
    name = rule.metric.removeprefix("audit.")
    if name not in AUDIT_METRICS:
        raise ShiftbenchInputError(f"{where}: unknown metric {rule.metric!r}; audit metrics: "
                                   + ", ".join(f"audit.{m}" for m in AUDIT_METRICS))
    audits = streams[rule.stream].audits
    if audits is None:
        return MetricValue(None, None, 0)
    rate = audits.metric(name)
    value = None if rate.value is None else 100 * rate.value
    return MetricValue(value, Interval(100 * rate.ci[0], 100 * rate.ci[1]), rate.total)


def _score(draws: StreamDraws, metric: str, where: str, intervals: Intervals | None = None) -> MetricValue:
    intervals = intervals or draws
    if metric in ("avg_h", "avg_f"):
        category = _CATEGORY[metric[-1]]
        interval = intervals.avg_h_interval() if metric == "avg_h" else intervals.avg_f_interval()
        return _sampled(draws.avg_point(category), draws.decided_avg(category), interval, draws.avg_cases(category))
    parts = metric.removeprefix("setting.").split(".")
    if len(parts) != 2 or parts[1] not in _CATEGORY:
        raise ShiftbenchInputError(f"{where}: unknown metric {metric!r}; use avg_h, avg_f, setting.<scenario>.h|f, "
                                   "diff.avg_h, diff.<scenario>.h|f, cost_per_task or latency_p95")
    cell: Cell = (_CATEGORY[parts[1]], None)
    return _sampled(draws.point(parts[0], cell), draws.decided(parts[0], cell),
                    intervals.setting_interval(parts[0], cell), draws.cases.get(parts[0], {}).get(cell, 0))


def _sampled(point: float | None, decided: Interval | str | None, bootstrap: Interval | None,
             cases: int) -> MetricValue:
    """A sampled score is judged by its interval only: without one (too few families, every task agreeing
    on a value with no exact bound) the point alone is no evidence, so the rule cannot PASS or FAIL on it."""
    if isinstance(decided, str):
        return MetricValue(point, None, cases, missing=decided)
    interval = decided or bootstrap
    if interval is None and point is not None:
        return MetricValue(point, None, cases, missing="no interval")
    return MetricValue(point, interval, cases)


# ---------------------------------------------------------------------------- rendering

DIGITS = {"cost_per_task": 4, "latency_p95": 1}
"""Decimals a metric is shown with: the report's own (USD per task to 4, seconds to 1, score points and
rates to 1, as `report` and `compare` print them), so one quantity reads the same in every command."""


def render_gate_text(outcome: GateOutcome) -> str:
    lines = [f"gate run {outcome.run_id}"]
    for result in outcome.results:
        value = result.value
        digits = DIGITS.get(result.rule.metric, 1)
        shown = "-" if value.estimate is None else f"{value.estimate:.{digits}f}"
        interval = ("" if value.interval is None else
                    f" [{value.interval.lo:.{digits}f}, {value.interval.hi:.{digits}f}]")
        more, unit = "", "replicas" if result.rule.metric.startswith("mde.") else "cases"
        if result.verdict is Verdict.INSUFFICIENT_EVIDENCE:
            more = (f"; {value.missing}" if value.missing else
                    f"; about {result.more_cases} more {unit} would settle it" if result.more_cases is not None
                    else f"; no number of {unit} settles it")
        lines.append(f"{result.verdict.value:<21} {result.rule.label}: {shown}{interval} over {value.cases} "
                     f"{unit}{more}")
    if outcome.pilot is not None:
        p = outcome.pilot
        median_r = "-" if p.median_r is None else f"{p.median_r:.3f}"
        why = "" if not p.reasons else " (" + "; ".join(p.reasons) + ")"
        lines.append(f"{p.verdict.value:<21} pilot: median r {median_r} over {p.pairs} usable pairs, projected "
                     f"${p.projected_usd:.2f} of ${p.budget_usd:.2f} remaining{why}")
    lines.append(f"overall: {outcome.verdict.value}")
    return "\n".join(lines)


def render_gate_json(outcome: GateOutcome) -> str:
    payload: dict[str, Any] = {
        "run_id": outcome.run_id, "verdict": outcome.verdict.value, "exit_code": outcome.exit_code,
        "rules": [{"rule": result.rule.label, "metric": result.rule.metric, "stream": result.rule.stream,
                   "base": result.rule.base or None, result.rule.side: result.rule.bar,
                   "estimate": result.value.estimate,
                   "ci": None if result.value.interval is None else result.value.interval.as_list(),
                   "cases": result.value.cases, "verdict": result.verdict.value, "more_cases": result.more_cases,
                   "why": result.value.missing or None}
                  for result in outcome.results],
        "pilot": None if outcome.pilot is None else {
            "verdict": outcome.pilot.verdict.value, "median_r": outcome.pilot.median_r, "pairs": outcome.pilot.pairs,
            "projected_usd": outcome.pilot.projected_usd, "budget_usd": outcome.pilot.budget_usd,
            "reasons": list(outcome.pilot.reasons)},
    }
    return orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode()

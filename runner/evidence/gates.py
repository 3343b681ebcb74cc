"""Gates: release rules judged by intervals, and the pilot rule that decides whether to escalate.

A rule names a metric and a bar, `min` (the metric must reach it) or `max` (must stay under it). Its
verdict comes from the metric's interval, never from the point estimate alone:
- PASS when the whole interval clears the bar,
- FAIL when the whole interval misses it,
- INSUFFICIENT_EVIDENCE in between, with how many more cases would settle it: an interval's half-width
  shrinks as 1/sqrt(n), so n * (half-width / distance to the bar)^2 cases would put the bar outside it.
A metric measured rather than sampled (p95 latency, cost per task) has no interval and is judged on
its value; cost per task of a model that bills nothing (offline, unpriced or priced at $0) is no
measurement, so a cost rule on it is INSUFFICIENT_EVIDENCE, saying why. The overall verdict is the
worst one: any FAIL fails, else any INSUFFICIENT_EVIDENCE.

The pilot rule: escalate from a pilot to the full sweep only if the median relative reduction r of the
chosen measure is at least `min_median_r`, there are at least `min_pairs` usable pairs, and the projected
cost of the full sweep fits the remaining budget: PROCEED, else STOP, with the numbers either way.

This module is pure: the numbers come from `runner.evidence.gate_run`, which reads them from a journal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from runner.common.toml_tables import Field, check_table, read_toml, refuse_unknown
from runner.stats.bootstrap import Interval
from simulators.errors import ShiftbenchInputError

__all__ = ["EXIT_CODES", "MEASURES", "GateFile", "MetricValue", "PilotDecision", "PilotRule", "Rule",
           "RuleResult", "Verdict", "cases_to_settle", "decide_pilot", "evaluate_mde_rule", "evaluate_rule",
           "load_rules", "overall_verdict"]


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
    PROCEED = "PROCEED"
    STOP = "STOP"


EXIT_CODES = {Verdict.PASS: 0, Verdict.PROCEED: 0, Verdict.FAIL: 1, Verdict.STOP: 1,
              Verdict.INSUFFICIENT_EVIDENCE: 3}
MEASURES = ("tokens", "turns", "cost")
"""What the pilot rule's r is taken over: per-task counts where less is better (cost in micro-USD)."""
_SEVERITY = {Verdict.PASS: 0, Verdict.PROCEED: 0, Verdict.INSUFFICIENT_EVIDENCE: 1, Verdict.FAIL: 2,
             Verdict.STOP: 2}


@dataclass(frozen=True)
class Rule:
    metric: str
    """`avg_h`, `avg_f`, `setting.<scenario>.h|f`, `diff.avg_h|avg_f`, `diff.<scenario>.h|f`,
    `cost_per_task`, `latency_p95`, `mde.avg_h|avg_f` (the achieved MDE across replicas)."""
    stream: str
    """`model/method` of the gated run."""
    bar: float
    side: str
    """`min` or `max`."""
    base: str = ""
    """For `diff.` metrics: the stream the difference is taken against (stream minus base)."""
    name: str = ""

    @property
    def label(self) -> str:
        against = f" - {self.base}" if self.base else ""
        return self.name or f"{self.metric} of {self.stream}{against} {self.side} {self.bar:g}"


@dataclass(frozen=True)
class PilotRule:
    base: str
    treat: str
    measure: str
    min_median_r: float
    min_pairs: int
    budget_usd: float
    """What is left to spend on the full sweep."""


@dataclass(frozen=True)
class GateFile:
    rules: tuple[Rule, ...]
    pilot: PilotRule | None


@dataclass(frozen=True)
class MetricValue:
    estimate: float | None
    interval: Interval | None
    """None for a measured (not sampled) metric: judged on its estimate."""
    cases: int
    """Cases behind the estimate: tasks, or pairs for a difference."""
    missing: str = ""
    """Why there is no estimate when that is not for want of cases (a model that reports no cost)."""


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    value: MetricValue
    verdict: Verdict
    more_cases: int | None
    """For INSUFFICIENT_EVIDENCE: about how many more cases would settle it; None when no number
    would (the estimate sits on the bar, or there is nothing measured yet)."""


@dataclass(frozen=True)
class PilotDecision:
    verdict: Verdict
    median_r: float | None
    pairs: int
    projected_usd: float
    budget_usd: float
    reasons: tuple[str, ...]
    """Why STOP: each condition that failed, in words with its numbers."""


def evaluate_rule(rule: Rule, value: MetricValue) -> RuleResult:
    if value.estimate is None or value.missing:
        return RuleResult(rule, value, Verdict.INSUFFICIENT_EVIDENCE, None)
    lo, hi = (value.estimate, value.estimate) if value.interval is None else (value.interval.lo, value.interval.hi)
    clears, misses = (lo >= rule.bar, hi < rule.bar) if rule.side == "min" else (hi <= rule.bar, lo > rule.bar)
    if clears:
        return RuleResult(rule, value, Verdict.PASS, None)
    if misses:
        return RuleResult(rule, value, Verdict.FAIL, None)
    return RuleResult(rule, value, Verdict.INSUFFICIENT_EVIDENCE, cases_to_settle(value, rule.bar))


def evaluate_mde_rule(rule: Rule, value: MetricValue) -> RuleResult:
    """An `mde.` rule: the achieved minimum detectable difference (`value.cases` replicas) must be at most
    the bar. Missing it is not a FAIL of the method but too little evidence: INSUFFICIENT_EVIDENCE, with
    about how many more replicas would reach the bar (the MDE falls as 1 / sqrt(K)); one replica, which
    measures no MDE, is INSUFFICIENT_EVIDENCE too."""
    if value.estimate is None:
        return RuleResult(rule, value, Verdict.INSUFFICIENT_EVIDENCE, None)
    if value.estimate <= rule.bar:
        return RuleResult(rule, value, Verdict.PASS, None)
    needed = math.ceil(value.cases * (value.estimate / rule.bar) ** 2) if rule.bar > 0 else None
    return RuleResult(rule, value, Verdict.INSUFFICIENT_EVIDENCE, None if needed is None else needed - value.cases)


def cases_to_settle(value: MetricValue, bar: float) -> int | None:
    """More cases that would shrink the interval (half-width ~ 1/sqrt(n)) until the bar falls outside."""
    if value.interval is None or value.estimate is None or value.cases <= 0:
        return None
    distance = abs(value.estimate - bar)
    half_width = (value.interval.hi - value.interval.lo) / 2
    if distance == 0:
        return None
    needed = value.cases * (half_width / distance) ** 2
    return max(1, math.ceil(needed - value.cases))


def overall_verdict(verdicts: list[Verdict]) -> Verdict:
    """The worst verdict; no rules at all pass vacuously."""
    if not verdicts:
        return Verdict.PASS
    worst = max(verdicts, key=lambda v: _SEVERITY[v])
    if worst in (Verdict.STOP, Verdict.FAIL):
        return Verdict.FAIL if Verdict.FAIL in verdicts else Verdict.STOP
    if worst is Verdict.INSUFFICIENT_EVIDENCE:
        return worst
    return Verdict.PASS if Verdict.PASS in verdicts else Verdict.PROCEED


def decide_pilot(rule: PilotRule, reductions: list[float], projected_usd: float) -> PilotDecision:
    """PROCEED only when the effect, the number of usable pairs and the projected cost all hold."""
    ordered = sorted(reductions)
    middle = len(ordered) // 2
    median_r = None if not ordered else (
        ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2)
    reasons = []
    if median_r is None or median_r < rule.min_median_r:
        shown = "none" if median_r is None else f"{median_r:.3f}"
        reasons.append(f"median r {shown} < {rule.min_median_r:g}")
    if len(ordered) < rule.min_pairs:
        reasons.append(f"{len(ordered)} usable pairs < {rule.min_pairs}")
    if projected_usd > rule.budget_usd:
        reasons.append(f"projected ${projected_usd:.2f} > remaining budget ${rule.budget_usd:.2f}")
    verdict = Verdict.STOP if reasons else Verdict.PROCEED
    return PilotDecision(verdict, median_r, len(ordered), projected_usd, rule.budget_usd, tuple(reasons))


# ---------------------------------------------------------------------------- the rules file

_RULE_FIELDS = {"name": Field("string"), "metric": Field("non-empty string"), "stream": Field("non-empty string"),
                "base": Field("string"), "min": Field("number"), "max": Field("number")}
_PILOT_FIELDS = {"base": Field("non-empty string"), "treat": Field("non-empty string"),
                 "measure": Field("non-empty string"), "min_median_r": Field("number"),
                 "min_pairs": Field("whole number"), "budget": Field("number")}

def load_rules(path: Path) -> GateFile:
    """A TOML file of `[[rule]]` tables and an optional `[pilot]` table; any problem is one line
    naming the file and the rule."""
    raw = read_toml(path, "the rules file")
    refuse_unknown(str(path), raw, {"rule", "pilot"}, what="table")
    rules = tuple(_rule(path, i, table) for i, table in enumerate(_tables(path, raw.get("rule", [])), start=1))
    pilot = _pilot(path, raw["pilot"]) if "pilot" in raw else None
    if not rules and pilot is None:
        raise ShiftbenchInputError(f"{path}: no [[rule]] and no [pilot]; nothing to gate on")
    return GateFile(rules, pilot)


def _tables(path: Path, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ShiftbenchInputError(f"{path}: rule must be an array of tables ([[rule]])")
    return value


def _rule(path: Path, number: int, table: dict[str, Any]) -> Rule:
    where = f"{path} [[rule]] {number}"
    check_table(where, table, _RULE_FIELDS)
    sides = [side for side in ("min", "max") if side in table]
    if len(sides) != 1:
        raise ShiftbenchInputError(f"{where}: give exactly one of min or max (the bar)")
    metric, stream = _text(where, table, "metric"), _text(where, table, "stream")
    base = str(table.get("base", ""))
    if metric.startswith("mde.") and sides != ["max"]:
        raise ShiftbenchInputError(f"{where}: {metric} is the smallest difference the run can detect; give its "
                                   "bar as max = POINTS")
    if metric.startswith("diff.") and not base:
        raise ShiftbenchInputError(f"{where}: {metric} is a paired difference; name its base stream (base = ...)")
    return Rule(metric=metric, stream=stream, bar=_number(where, table, sides[0]), side=sides[0], base=base,
                name=str(table.get("name", "")))


def _pilot(path: Path, table: Any) -> PilotRule:
    where = f"{path} [pilot]"
    if not isinstance(table, dict):
        raise ShiftbenchInputError(f"{where} must be a table")
    check_table(where, table, _PILOT_FIELDS)
    measure = _text(where, table, "measure")
    if measure not in MEASURES:
        raise ShiftbenchInputError(f"{where}: measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    pairs = table.get("min_pairs")
    if not isinstance(pairs, int) or isinstance(pairs, bool) or pairs < 1:
        raise ShiftbenchInputError(f"{where}: min_pairs must be a positive integer")
    return PilotRule(base=_text(where, table, "base"), treat=_text(where, table, "treat"), measure=measure,
                     min_median_r=_number(where, table, "min_median_r"), min_pairs=pairs,
                     budget_usd=_number(where, table, "budget"))


def _text(where: str, table: dict[str, Any], key: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise ShiftbenchInputError(f"{where}: {key} must be a non-empty string")
    return value


def _number(where: str, table: dict[str, Any], key: str) -> float:
    if key not in table:
        raise ShiftbenchInputError(f"{where}: {key} must be a number")
    return float(table[key])  # its kind (a finite number) was checked with the table

"""Paired comparison of two streams over identical test tasks: does A beat B, by how much, how surely.

Per setting (H and F) and for Avg H / Avg F: the difference A - B with its paired bootstrap interval
(both sides resampled by the very same family draws, see `bootstrap`), win / tie / loss counts over
tasks and the exact one-sided sign test of "A wins more often" (ties dropped). Per task: the mean
cost, tokens and turns of each side, their difference and the relative reduction r of A against the
base B (cost counted in micro-USD so r's max(1, base) guard means the same for every measure).

Two streams are comparable only over the same dataset and the same finished test tasks; anything else
is refused with one line, so a difference never mixes different questions. Replicated streams are paired
by replica index too (`compare_replicas`), and the verdict line says when K is too small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from runner.common.tables import text_table, wrap_prose
from runner.report import scenario_sort_key
from runner.stats.bootstrap import DEFAULT_SPEC, BootstrapSpec, Interval, paired_values, stream_draws
from runner.stats.compare_replicas import ReplicaVerdict, paired_intervals, replica_verdict
from runner.stats.outcomes import MEASURES, MICRO, Outcome, StreamRef, TaskKey, by_task, task_values
from runner.stats.replicated import REPLICA_UNIT
from runner.stats.stats import median, relative_reduction, sign_test_p, win_tie_loss
from simulators.errors import ShiftbenchInputError

__all__ = ["Comparison", "MeasureDiff", "PairedFigure", "compare_streams", "p_value_text", "render_comparison_json",
           "render_comparison_text"]

SPECIFIED_DOMAINS = ("retail", "banking")


@dataclass(frozen=True)
class PairedFigure:
    diff: float
    ci: Interval | None
    wins: int
    ties: int
    losses: int
    sign_test_p: float
    no_ci: str = field(default="no interval", compare=False)
    """What stands for the interval when there is none: too few families ("2 tasks: too few for an
    interval", "no interval (1 family)"), or every task agreeing on a value with no exact bound."""

    @property
    def ci_text(self) -> str:
        return self.no_ci if self.ci is None else f"[{self.ci.lo:.1f}, {self.ci.hi:.1f}]"

    def as_json(self) -> dict[str, Any]:
        return {"diff": self.diff, "ci": None if self.ci is None else self.ci.as_list(),
                **({"ci_note": self.no_ci} if self.ci is None else {}), "wins": self.wins,
                "ties": self.ties, "losses": self.losses, "sign_test_p": self.sign_test_p}


@dataclass(frozen=True)
class MeasureDiff:
    """A per-task measure (less is better): each side's mean, A - B, r of the means and median r."""

    a: float
    b: float
    diff: float
    r: float
    median_r: float | None


@dataclass(frozen=True)
class Comparison:
    a: StreamRef
    b: StreamRef
    pairs: int
    avg_h: PairedFigure | None
    avg_f: PairedFigure | None
    settings: Mapping[str, Mapping[str, PairedFigure]]
    """scenario -> {"h": ..., "f": ...} (f only where the setting has fully specified tasks)."""
    per_task: Mapping[str, MeasureDiff]
    spec: BootstrapSpec
    left_out: tuple[int, int] | None = None
    """With `shared`: the finished test tasks only A, and only B, had (not compared); None otherwise."""
    noise: ReplicaVerdict | None = None
    """Replicas paired by index, the MDE of this many, and whether the difference is clear of their noise."""


def compare_streams(a: StreamRef, a_outcomes: Sequence[Outcome], b: StreamRef, b_outcomes: Sequence[Outcome],
                    spec: BootstrapSpec = DEFAULT_SPEC, shared: bool = False) -> Comparison:
    """`shared`: compare the test tasks both finished and count the rest, instead of refusing two
    streams whose finished tasks differ (runs over different scenarios, say)."""
    a_tasks, b_tasks = by_task(a_outcomes), by_task(b_outcomes)
    left_out = None
    if shared:
        both = a_tasks.keys() & b_tasks.keys()
        left_out = (len(a_tasks) - len(both), len(b_tasks) - len(both))
        a_outcomes = [o for o in a_outcomes if o.key in both]
        b_outcomes = [o for o in b_outcomes if o.key in both]
        a_tasks, b_tasks = by_task(a_outcomes), by_task(b_outcomes)
    _check_same_tasks(a, a_tasks, b, b_tasks)
    a_values, b_values = task_values(a_outcomes), task_values(b_outcomes)
    # With replicas on both sides: pairs by replica index too, resampling replicas, then families.
    one_level = stream_draws(paired_values(a_values, b_values), spec, paired=True)
    draws = paired_intervals(a, a_outcomes, b, b_outcomes, spec) or one_level
    pairs = {(t.setting, t.task_id): t.value for t in a_values}
    against = {(t.setting, t.task_id): t.value for t in b_values}
    categories = {(t.setting, t.task_id): t.category for t in a_values}

    def figure(keys: list[TaskKey], diff: float | None, ci: Interval | None,
               decided: Interval | str | None) -> PairedFigure | None:
        """`decided`: a note or an exact interval standing for the bootstrap's (`StreamDraws.decided`)."""
        if diff is None or not keys:
            return None
        wins, ties, losses = win_tie_loss([(pairs[k], against[k]) for k in keys])
        if isinstance(decided, str):
            return PairedFigure(diff, None, wins, ties, losses, sign_test_p(wins, losses), decided)
        return PairedFigure(diff, decided or ci, wins, ties, losses, sign_test_p(wins, losses))

    settings: dict[str, dict[str, PairedFigure]] = {}
    for scenario in sorted({k[0] for k in pairs}, key=scenario_sort_key):
        for label, category in (("h", "hidden"), ("f", "fully_specified")):
            keys = [k for k in pairs if k[0] == scenario and categories[k] == category]
            found = figure(keys, _mean_difference(pairs, against, keys),
                           draws.setting_interval(scenario, (category, None)),
                           one_level.decided(scenario, (category, None)))
            if found is not None:
                settings.setdefault(scenario, {})[label] = found
    hidden = [k for k in pairs if categories[k] == "hidden"]
    specified = [k for k in pairs if categories[k] == "fully_specified" and k[0].split("_")[0] in SPECIFIED_DOMAINS]
    avg_h = figure(hidden, _mean_of(settings, "h"), draws.avg_h_interval(), one_level.decided_avg("hidden"))
    avg_f = figure(specified, _mean_of({s: v for s, v in settings.items() if s.split("_")[0] in SPECIFIED_DOMAINS},
                                       "f"), draws.avg_f_interval(), one_level.decided_avg("fully_specified"))
    verdict = replica_verdict(a_outcomes, b_outcomes, None if avg_h is None else avg_h.diff,
                              None if avg_h is None else avg_h.ci)
    return Comparison(a=a, b=b, pairs=len(pairs), avg_h=avg_h, avg_f=avg_f, settings=settings,
                      per_task=_measures(a_tasks, b_tasks), spec=spec, left_out=left_out,
                      noise=verdict)


def _mean_difference(a: Mapping[TaskKey, float], b: Mapping[TaskKey, float], keys: list[TaskKey]) -> float | None:
    if not keys:
        return None
    return sum(a[k] - b[k] for k in keys) / len(keys)


def _mean_of(settings: Mapping[str, Mapping[str, PairedFigure]], label: str) -> float | None:
    diffs = [figures[label].diff for figures in settings.values() if label in figures]
    return sum(diffs) / len(diffs) if diffs else None


def _check_same_tasks(a: StreamRef, a_tasks: Mapping[TaskKey, list[Outcome]], b: StreamRef,
                      b_tasks: Mapping[TaskKey, list[Outcome]]) -> None:
    if a_tasks.keys() == b_tasks.keys():
        if not a_tasks:
            raise ShiftbenchInputError(f"{a} and {b} have no finished test tasks in common to compare")
        return
    only_a, only_b = sorted(a_tasks.keys() - b_tasks.keys()), sorted(b_tasks.keys() - a_tasks.keys())
    both = len(a_tasks.keys() & b_tasks.keys())
    shared = f"`compare --shared` compares the {both} test tasks both finished" if both else \
        "they have no finished test task in common"
    a_scenarios, b_scenarios = {k[0] for k in a_tasks}, {k[0] for k in b_tasks}
    if a_scenarios != b_scenarios:
        raise ShiftbenchInputError(
            f"{a} and {b} ran different scenarios (only A: {_listed(a_scenarios - b_scenarios)}; only B: "
            f"{_listed(b_scenarios - a_scenarios)}); {shared}")
    example = (only_a or only_b)[0]
    raise ShiftbenchInputError(
        f"{a} and {b} did not finish the same test tasks of {_listed(a_scenarios)} ({len(a_tasks)} vs "
        f"{len(b_tasks)}; {len(only_a)} only in A, {len(only_b)} only in B, e.g. {example[0]}/{example[1]}); "
        f"resume the partial one first, or {shared.removeprefix('they have ')}")


def _listed(scenarios: set[str]) -> str:
    return ", ".join(sorted(scenarios, key=scenario_sort_key)) or "none"


def _measures(a_tasks: Mapping[TaskKey, list[Outcome]], b_tasks: Mapping[TaskKey, list[Outcome]],
              ) -> dict[str, MeasureDiff]:
    result = {}
    for measure, read in MEASURES.items():
        name = "cost_usd" if measure == "cost" else measure
        a_means = {k: sum(read(o) for o in tries) / len(tries) for k, tries in a_tasks.items()}
        b_means = {k: sum(read(o) for o in tries) / len(tries) for k, tries in b_tasks.items()}
        a_mean, b_mean = sum(a_means.values()) / len(a_means), sum(b_means.values()) / len(b_means)
        scale = MICRO if name == "cost_usd" else 1
        result[name] = MeasureDiff(
            a=a_mean / scale, b=b_mean / scale, diff=(a_mean - b_mean) / scale,
            r=relative_reduction(b_mean, a_mean),
            median_r=median([relative_reduction(b_means[k], a_means[k]) for k in a_means]))
    return result


# ---------------------------------------------------------------------------- rendering

def render_comparison_json(comparison: Comparison) -> str:
    payload = {
        "a": str(comparison.a), "b": str(comparison.b), "pairs": comparison.pairs,
        "avg_h": _figure_json(comparison.avg_h), "avg_f": _figure_json(comparison.avg_f),
        "settings": {name: {**figures["h"].as_json(), **({"f": figures["f"].as_json()} if "f" in figures else {})}
                     if "h" in figures else {"f": figures["f"].as_json()}
                     for name, figures in comparison.settings.items()},
        "per_task": {name: vars(m) for name, m in comparison.per_task.items()},
        "bootstrap": vars(comparison.spec),
        "shared": None if comparison.left_out is None else {"only_a": comparison.left_out[0],
                                                            "only_b": comparison.left_out[1]},
        **({} if comparison.noise is None else {"replicas": vars(comparison.noise)}),
    }
    return orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode()


def _figure_json(figure: PairedFigure | None) -> dict[str, Any] | None:
    return None if figure is None else figure.as_json()


def render_comparison_text(comparison: Comparison, width: int | None = None) -> str:
    """`width`: the terminal's (None: natural, for pipes and files); prose wraps between words and the
    tables wrap within cells or fall to panels, never mid-cell."""
    spec = comparison.spec
    shared = "" if comparison.left_out is None else (
        f" (--shared: the tasks both finished; {comparison.left_out[0]} only in A and {comparison.left_out[1]} only "
        "in B left out)")
    lines = [f"A {comparison.a}  vs  B {comparison.b}: {comparison.pairs} paired test tasks{shared}",
             f"differences A - B in score points; {spec.level:.0%} paired bootstrap intervals ({spec.draws} draws, "
             f"seed {spec.seed}, {_unit(comparison)}); sign test one-sided (A better), ties dropped",
             *([] if comparison.noise is None else [comparison.noise.text])]
    rows = [("Avg H", comparison.avg_h), ("Avg F", comparison.avg_f)]
    rows += [(f"{name} {label.upper()}", figure) for name, figures in comparison.settings.items()
             for label, figure in figures.items()]
    figures = [[label, f"{figure.diff:+.1f}", figure.ci_text, str(figure.wins), str(figure.ties), str(figure.losses),
                p_value_text(figure.sign_test_p)] for label, figure in rows if figure is not None]
    per_task = []
    for name, m in comparison.per_task.items():
        digits = 6 if name == "cost_usd" else 1
        per_task.append([name, f"{m.a:.{digits}f}", f"{m.b:.{digits}f}", f"{m.diff:+.{digits}f}", f"{m.r:.3f}",
                         "-" if m.median_r is None else f"{m.median_r:.3f}"])
    return "\n\n".join([
        wrap_prose("\n".join(lines), width),
        text_table(["", "diff", "interval", "win", "tie", "loss", "sign p"], figures, "lrlrrrr", width, keys=1),
        text_table(["per task", "A", "B", "A - B", "r", "median r"], per_task, "lrrrrr", width, keys=1)])


def _unit(comparison: Comparison) -> str:
    """What the intervals resample: families, or replicas paired by index and then families."""
    replicated = comparison.noise is not None and comparison.noise.replicas > 1
    return REPLICA_UNIT if replicated else comparison.spec.unit


def p_value_text(value: float) -> str:
    if value == 0.0:
        return "<1e-300"  # the exact tail underflows a float: over a thousand wins and no loss
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"

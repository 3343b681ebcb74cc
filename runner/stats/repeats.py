"""Repeats (`--repeats K`): each test task run K times. The report gives the mean (every score already
averages a task's repeats), Avg H / Avg F of each repeat on its own with their spread (largest minus
smallest: how much one run of the suite could have differed from another), and pass^k for k = 1..K:
the share of tasks solved in all of their first k tries, the reliability figure agent benchmarks use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.stats.bootstrap import SPECIFIED_DOMAINS, SettingSample
from runner.stats.outcomes import Outcome, by_task, task_values
from runner.stats.stats import pass_hat_k

__all__ = ["RepeatSummary", "average_scores", "repeat_summary"]


@dataclass(frozen=True)
class RepeatSummary:
    repeats: int
    avg_h_by_repeat: list[float | None]
    avg_f_by_repeat: list[float | None]
    avg_h_spread: float | None
    avg_f_spread: float | None
    pass_k: dict[str, float | None]
    """"1" .. "K" -> pass^k over every test task with K tries."""


def average_scores(outcomes: Sequence[Outcome]) -> tuple[float | None, float | None]:
    """(Avg H, Avg F) as the report computes them: each setting's mean, then the mean over settings."""
    by_setting: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_setting.setdefault(outcome.scenario, []).append(outcome)
    hidden, specified = [], []
    for name, found in by_setting.items():
        sample = SettingSample(name, task_values(found))
        points = dict(zip(sample.cells, sample.point(), strict=True))
        if ("hidden", None) in points:
            hidden.append(float(points[("hidden", None)]))
        if ("fully_specified", None) in points and name.split("_")[0] in SPECIFIED_DOMAINS:
            specified.append(float(points[("fully_specified", None)]))
    return (sum(hidden) / len(hidden) if hidden else None,
            sum(specified) / len(specified) if specified else None)


def repeat_summary(outcomes: Sequence[Outcome]) -> RepeatSummary | None:
    """None when no task ran more than once."""
    repeats = 1 + max((o.repeat for o in outcomes), default=0)
    if repeats < 2:
        return None
    per_repeat = [average_scores([o for o in outcomes if o.repeat == r]) for r in range(repeats)]
    # A task's tries are its repeats within one stream replica: each replica learned its own state, so
    # its repeats are the K tries of that state (pass^k over every task of every replica).
    replicas = sorted({o.replica for o in outcomes})
    tries = {f"{replica}/{key[0]}/{key[1]}": [o.reward for o in found] for replica in replicas
             for key, found in by_task([o for o in outcomes if o.replica == replica]).items()}
    return RepeatSummary(
        repeats=repeats,
        avg_h_by_repeat=[h for h, _ in per_repeat], avg_f_by_repeat=[f for _, f in per_repeat],
        avg_h_spread=_spread([h for h, _ in per_repeat]), avg_f_spread=_spread([f for _, f in per_repeat]),
        pass_k={str(k): pass_hat_k(tries, k) for k in range(1, repeats + 1)})


def _spread(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) - min(present) if len(present) >= 2 else None

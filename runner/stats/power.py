"""Power before money: how many replicas (and test tasks) a comparison needs to detect D points.

From a pilot with K >= 2 replicas, per setting, the variance between replicas splits in two:
- the per-task part s_e^2: the (replica x task) residual mean square of the pilot's K x n table (repeats
  averaged), what is left of a score once its replica's and its task's means are taken out: a replica's
  setting score carries s_e^2 / n of it with n tasks. (Each task's own variance across replicas,
  averaged, was used before: it holds the per-replica part too, which made s_a^2 short by s_a^2 / n
  and the F test below compare the wrong ratio.)
- the per-replica part s_a^2 = Var(replica scores) - s_e^2 / n: what a whole serving stream shifts
  together, which more tasks do not average away (0 unless the replica scores vary more than the
  per-task part explains, `_per_replica`).
With n' tasks per setting, a replica's Avg H (the mean of S settings) varies by
    SD(n')^2 = sum over settings of (s_a^2 + s_e^2 / n') / S^2,
and two independent streams of K replicas each detect at 80% power a difference of
`noise.mde(SD(n'), K)`. The fewest K whose MDE is within D is the answer; with a per-replica part
that large, more tasks stop helping and only replicas do.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from runner.stats.noise import POWER, mde
from runner.stats.outcomes import Outcome
from runner.stats.stats import f_quantile

__all__ = ["MAX_REPLICAS", "SettingVariance", "fewest", "predicted_sd", "replicas_needed", "setting_variances"]

MAX_REPLICAS = 1000
POOL_BELOW = 0.75
"""The per-replica part counts only when the replica scores vary more than the 75th percentile of what
the per-task part alone would make them vary."""


@dataclass(frozen=True)
class SettingVariance:
    setting: str
    tasks: int
    """Tasks of the category every replica finished in the pilot."""
    per_task: float
    """s_e^2: the (replica x task) residual mean square (score points squared)."""
    per_replica: float
    """s_a^2: the part of the replica scores' variance that more tasks do not average away."""


def setting_variances(outcomes: Sequence[Outcome], category: str) -> list[SettingVariance]:
    """Per setting with tasks of `category`: the two parts of the between-replica variance."""
    scores: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for o in outcomes:
        if o.category == category:
            scores[o.scenario][o.task_id][o.replica].append(100 * o.reward)
    replicas = sorted({o.replica for o in outcomes})
    found = []
    for setting, tasks in sorted(scores.items()):
        complete = {task: [sum(by[r]) / len(by[r]) for r in replicas] for task, by in tasks.items()
                    if len(by) == len(replicas)}
        if not complete or len(replicas) < 2:
            continue
        means = [sum(values[i] for values in complete.values()) / len(complete) for i in range(len(replicas))]
        per_task = _residual_mean_square(list(complete.values()), means)
        found.append(SettingVariance(setting, len(complete), per_task,
                                     _per_replica(statistics.variance(means), per_task, len(complete), len(replicas))))
    return found


def predicted_sd(variances: Sequence[SettingVariance], tasks: Mapping[str, int]) -> float:
    """SD of one replica's average over the settings with `tasks[setting]` tasks each (default: the pilot's)."""
    total = sum(v.per_replica + v.per_task / max(1, tasks.get(v.setting, v.tasks)) for v in variances)
    return math.sqrt(total) / len(variances)


def replicas_needed(sd: float, difference: float, power: float = POWER) -> int | None:
    """The fewest replicas per stream whose MDE is within `difference`; None past MAX_REPLICAS. The MDE
    falls as replicas grow, so the fewest is found by bisection over 2 .. MAX_REPLICAS."""
    def enough(replicas: int) -> bool:
        found = mde(sd, replicas, power)
        return found is not None and found <= difference

    return fewest(enough, MAX_REPLICAS)


def fewest(enough: Callable[[int], bool], most: int) -> int | None:
    """The smallest n in 2 .. most with enough(n), for an `enough` that stays true once it is; None if
    not even `most` is."""
    if not enough(most):
        return None
    low, high = 1, most  # enough(high) holds; low is below the range
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def _residual_mean_square(tasks: list[list[float]], replica_means: list[float]) -> float:
    """The two-way (replica x task) residual mean square: sum of (y_kt - mean_k - mean_t + grand)^2 over
    (K - 1)(n - 1); with one task, each task's variance across replicas (nothing to take out)."""
    replicas, n = len(replica_means), len(tasks)
    if n < 2:
        return statistics.variance(tasks[0])
    grand = sum(replica_means) / replicas
    squares = 0.0
    for values in tasks:
        task_mean = sum(values) / replicas
        squares += sum((y - m - task_mean + grand) ** 2 for y, m in zip(values, replica_means, strict=True))
    return squares / ((replicas - 1) * (n - 1))


def _per_replica(between: float, per_task: float, tasks: int, replicas: int) -> float:
    """s_a^2 from the replica scores' variance, pooled to 0 unless it shows ("sometimes pool"): the ratio
    of `between` to what the per-task part alone gives it, F with (K - 1, (K - 1)(n - 1)) degrees of
    freedom, must pass its 75th percentile. A few replicas estimate a per-replica part poorly; pooling
    one that does not show keeps the many-task estimate of s_e^2 from being drowned by it."""
    alone = per_task / tasks
    if alone <= 0:
        return between
    if tasks < 2 or between / alone < f_quantile(POOL_BELOW, replicas - 1, (replicas - 1) * (tasks - 1)):
        return 0.0
    return between - alone

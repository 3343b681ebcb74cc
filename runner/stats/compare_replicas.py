"""`compare` over replicated streams: pairs by task AND by replica index, and says when K is too small.

Replica k of A is paired with replica k of B (the same sampling seed; the offline `scripted:noisy` agent
then deviates on the same tasks on both sides), each pair's per-task differences resampled by the
two-level bootstrap (`replicated`: replicas, then families). Over the replica indices both sides have,
the per-replica difference of Avg H (A_k - B_k) varies by SD_d; the difference a comparison of this
many replicas detects at 80% power is MDE = delta x SD_d / sqrt(K), delta the shift a paired t test with
K - 1 degrees of freedom detects at that power (`t_power`, exact: t_{K-1}(0.975) + t_{K-1}(0.80), often
used instead, has 73% power at K = 2), and the
verdict says whether the observed difference is clear of the noise, or how many replicas would tell it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from runner.stats.bootstrap import BootstrapSpec, Interval, paired_values
from runner.stats.noise import POWER
from runner.stats.outcomes import Outcome, StreamRef, task_values
from runner.stats.power import fewest
from runner.stats.repeats import average_scores
from runner.stats.replicated import Intervals, ReplicaValue, replica_draws
from runner.stats.t_power import shift_for_power
from simulators.errors import ShiftbenchInputError

__all__ = ["MAX_REPLICAS", "ReplicaVerdict", "paired_intervals", "replica_verdict", "replicas_to_detect"]

MAX_REPLICAS = 1000


@dataclass(frozen=True)
class ReplicaVerdict:
    replicas: int
    """Replica indices both sides have (1: the noise across serving streams is not measured)."""
    sd_avg_h: float | None
    """SD over replicas of A_k - B_k in Avg H."""
    mde_avg_h: float | None
    needed: int | None
    """Replicas per side that would detect the observed Avg H difference at 80% power."""
    text: str


def _paired_factor(replicas: int, power: float = POWER, level: float = 0.95) -> float:
    return shift_for_power(replicas - 1, power, level)


def replicas_to_detect(difference: float, sd: float, power: float = POWER) -> int | None:
    """The fewest replicas per side (paired by index) whose MDE is within `difference`; None past MAX."""
    if sd <= 0:
        return 2
    return fewest(lambda replicas: _paired_factor(replicas, power) * sd / math.sqrt(replicas) <= abs(difference),
                  MAX_REPLICAS)


def paired_intervals(a: StreamRef, a_outcomes: Sequence[Outcome], b: StreamRef, b_outcomes: Sequence[Outcome],
                     spec: BootstrapSpec) -> Intervals | None:
    """Two-level intervals of A - B over the replica indices both have; None with fewer than two."""
    common = _common(a_outcomes, b_outcomes)
    if len(common) < 2:
        return None
    values = []
    for replica in common:
        mine = task_values([o for o in a_outcomes if o.replica == replica])
        theirs = task_values([o for o in b_outcomes if o.replica == replica])
        try:
            diffs = paired_values(mine, theirs)
        except ValueError:
            raise ShiftbenchInputError(f"{a} and {b}: replica {replica} did not finish the same test tasks on both "
                                       "sides; resume the partial run first") from None
        values += [ReplicaValue(replica, d) for d in diffs]
    return replica_draws(values, spec, bounds=(-100.0, 100.0))


def replica_verdict(a_outcomes: Sequence[Outcome], b_outcomes: Sequence[Outcome], diff: float | None,
                    ci: Interval | None) -> ReplicaVerdict:
    common = _common(a_outcomes, b_outcomes)
    sides = f" (A has {len(_common(a_outcomes, a_outcomes))}, B {len(_common(b_outcomes, b_outcomes))})" \
        if len(_common(a_outcomes, a_outcomes)) != len(_common(b_outcomes, b_outcomes)) else ""
    if len(common) < 2:
        return ReplicaVerdict(len(common), None, None, None,
                              f"{len(common)} replica index on both sides{sides}: the noise across serving streams "
                              "is not measured, and the interval resamples task families of one serving stream "
                              "only; a second run may differ by more (`run --replicas K`, sized by `shiftbench "
                              "power`)")
    per_replica = []
    for replica in common:
        a_h, _ = average_scores([o for o in a_outcomes if o.replica == replica])
        b_h, _ = average_scores([o for o in b_outcomes if o.replica == replica])
        if a_h is not None and b_h is not None:
            per_replica.append(a_h - b_h)
    if diff is None or len(per_replica) < 2:
        return ReplicaVerdict(len(common), None, None, None, f"{len(common)} replicas{sides}: no Avg H to compare")
    sd = statistics.stdev(per_replica)
    mde = _paired_factor(len(common)) * sd / math.sqrt(len(common))
    needed = replicas_to_detect(diff, sd)
    clear = ci is not None and (ci.lo > 0 or ci.hi < 0)
    head = f"{len(common)} replicas paired by index{sides}: Avg H A - B = {diff:+.1f}, detectable at 80% power from " \
           f"{mde:.1f} points (SD of the per-replica differences {sd:.1f})"
    if clear and abs(diff) >= mde:
        text = f"{head}; the difference is clear of the noise across serving streams"
    elif clear:
        text = (f"{head}; the interval excludes 0 but K = {len(common)} replicas are too few to rely on a "
                f"difference this size ({_needed(needed)} per side detect it at 80% power)")
    else:
        text = (f"{head}; K = {len(common)} replicas are too few to tell {diff:+.1f} from noise "
                f"({_needed(needed)} per side would detect it at 80% power)")
    return ReplicaVerdict(len(common), sd, mde, needed, text)


def _needed(needed: int | None) -> str:
    return f"more than {MAX_REPLICAS} replicas" if needed is None else f"about {needed} replicas"


def _common(a: Sequence[Outcome], b: Sequence[Outcome]) -> list[int]:
    return sorted({o.replica for o in a} & {o.replica for o in b})

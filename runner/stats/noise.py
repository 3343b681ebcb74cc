"""The noise floor of a replicated stream (`--replicas K`): how much a second serving stream would differ.

Per setting (H and F, and per window for the learning curves' bands) and for Avg H / Avg F: each
replica's own score, their standard deviation (n - 1) and range. Per test task: its flip rate, the
share of pairs of replicas whose rewards differ (repeats averaged first), and the least stable tasks.
And the minimum detectable difference (MDE) at 80% power of a comparison of two streams of this size
on the same tasks: delta x sqrt(2 SD^2 / K), delta the shift in standard errors that a two-sided t test
with df = 2 (K - 1) detects at 80% power (`t_power`, exact; about t_{df}(0.975) + t_{df}(0.80) when df
is large), where SD is the between-replica SD of Avg H (or Avg F). One replica measures none of it:
`NoiseFloor` needs two.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from runner.stats.outcomes import Outcome
from runner.stats.repeats import average_scores
from runner.stats.stats import chi2_quantile
from runner.stats.t_power import shift_for_power

__all__ = ["LEAST_STABLE", "NOT_MEASURED", "POWER", "NoiseFloor", "Spread", "TaskFlip", "WindowSpread", "mde",
           "noise_floor", "replica_count"]

POWER = 0.8
LEVEL = 0.95
LEAST_STABLE = 5
NOT_MEASURED = ("not measured: one replica per stream, so the intervals resample task families of one serving "
                "stream only; `run --replicas K` measures it")
FLIP_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Spread:
    """One figure across replicas: each replica's value (None where it has none), SD and range."""

    by_replica: list[float | None]
    sd: float | None
    min: float | None
    max: float | None


@dataclass(frozen=True)
class WindowSpread:
    window: int
    hidden: Spread
    fully_specified: Spread


@dataclass(frozen=True)
class TaskFlip:
    scenario: str
    task_id: str
    category: str
    rewards: list[float]
    """Per replica, the task's mean reward over its repeats."""
    flip_rate: float
    """The share of pairs of replicas whose rewards differ."""


@dataclass(frozen=True)
class NoiseFloor:
    replicas: int
    avg_h: Spread
    avg_f: Spread
    settings: dict[str, dict[str, Spread]]
    """scenario -> {"h": Spread, "f": Spread} (a category only where the setting has it)."""
    windows: dict[str, list[WindowSpread]]
    flip_rate: float | None
    """Mean flip rate over the test tasks every replica finished: the chance two replicas disagree."""
    tasks_flipping: float | None
    """The share of those tasks whose rewards are not all equal."""
    least_stable: list[TaskFlip]
    mde_avg_h: float | None
    mde_avg_f: float | None
    power: float = POWER
    level: float = LEVEL
    notes: list[str] = field(default_factory=list)


def replica_count(outcomes: Sequence[Outcome]) -> int:
    return len({o.replica for o in outcomes})


def mde(sd: float | None, replicas: int, power: float = POWER, level: float = LEVEL) -> float | None:
    """The smallest difference two independent streams of `replicas` replicas each, whose replica scores
    vary by `sd`, detect with probability `power` in a two-sided test at `level`."""
    if sd is None or replicas < 2:
        return None
    return shift_for_power(2 * (replicas - 1), power, level) * math.sqrt(2 * sd * sd / replicas)


def noise_floor(outcomes: Sequence[Outcome], power: float = POWER) -> NoiseFloor | None:
    """None with fewer than two replicas."""
    replicas = sorted({o.replica for o in outcomes})
    if len(replicas) < 2:
        return None
    of = {r: [o for o in outcomes if o.replica == r] for r in replicas}
    averages = [average_scores(of[r]) for r in replicas]
    avg_h, avg_f = _spread([h for h, _ in averages]), _spread([f for _, f in averages])
    flips = _flips(outcomes, replicas)
    notes = [] if len(replicas) >= 5 else [
        f"{len(replicas)} replicas: the between-replica SD is itself uncertain (its 95% range spans "
        f"x{_sd_ratio(len(replicas), 0.025):.2f} to x{_sd_ratio(len(replicas), 0.975):.2f}); 5 or more pin it better"]
    rates = [f.flip_rate for f in flips]
    return NoiseFloor(
        replicas=len(replicas), avg_h=avg_h, avg_f=avg_f, settings=_settings(of, replicas),
        windows=_windows(of, replicas),
        flip_rate=sum(rates) / len(rates) if rates else None,
        tasks_flipping=sum(1 for r in rates if r > 0) / len(rates) if rates else None,
        least_stable=sorted(flips, key=lambda f: (-f.flip_rate, -_sd(f.rewards), f.scenario, f.task_id))[:LEAST_STABLE],
        mde_avg_h=mde(avg_h.sd, len(replicas), power), mde_avg_f=mde(avg_f.sd, len(replicas), power), power=power,
        notes=notes)


def _sd_ratio(replicas: int, quantile: float) -> float:
    """How far a sample SD of `replicas` values may sit from the true one: sqrt(chi2_q(K-1) / (K-1)), the
    chi-square quantile exact (Wilson-Hilferty's approximation, used before, gave x0.00 for the 2.5% end at
    K = 2, where the exact is x0.03, and x0.11 at K = 3 for x0.16)."""
    df = replicas - 1
    return math.sqrt(chi2_quantile(quantile, df) / df)


def _spread(values: list[float | None]) -> Spread:
    present = [v for v in values if v is not None]
    return Spread(by_replica=values, sd=statistics.stdev(present) if len(present) >= 2 else None,
                  min=min(present) if present else None, max=max(present) if present else None)


def _sd(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) >= 2 else 0.0


def _scores(outcomes: Sequence[Outcome], category: str) -> float | None:
    found = [o.reward for o in outcomes if o.category == category]
    return 100 * sum(found) / len(found) if found else None


def _settings(of: dict[int, list[Outcome]], replicas: list[int]) -> dict[str, dict[str, Spread]]:
    result: dict[str, dict[str, Spread]] = {}
    for scenario in sorted({o.scenario for found in of.values() for o in found}):
        for label, category in (("h", "hidden"), ("f", "fully_specified")):
            values = [_scores([o for o in of[r] if o.scenario == scenario], category) for r in replicas]
            if any(v is not None for v in values):
                result.setdefault(scenario, {})[label] = _spread(values)
    return result


def _windows(of: dict[int, list[Outcome]], replicas: list[int]) -> dict[str, list[WindowSpread]]:
    result: dict[str, list[WindowSpread]] = {}
    for scenario in sorted({o.scenario for found in of.values() for o in found}):
        mine = {r: [o for o in of[r] if o.scenario == scenario] for r in replicas}
        windows = sorted({o.window for found in mine.values() for o in found})
        result[scenario] = [WindowSpread(
            window,
            _spread([_scores([o for o in mine[r] if o.window == window], "hidden") for r in replicas]),
            _spread([_scores([o for o in mine[r] if o.window == window], "fully_specified") for r in replicas]))
            for window in windows]
    return result


def _flips(outcomes: Sequence[Outcome], replicas: list[int]) -> list[TaskFlip]:
    """Per task every replica finished: its reward per replica (repeats averaged) and its flip rate."""
    rewards: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    categories: dict[tuple[str, str], str] = {}
    for o in outcomes:
        rewards[o.key][o.replica].append(o.reward)
        categories[o.key] = o.category
    flips = []
    for key, by_replica in sorted(rewards.items()):
        if len(by_replica) < len(replicas):
            continue
        means = [sum(by_replica[r]) / len(by_replica[r]) for r in replicas]
        pairs = list(combinations(means, 2))
        rate = sum(1 for a, b in pairs if abs(a - b) > FLIP_TOLERANCE) / len(pairs)
        flips.append(TaskFlip(key[0], key[1], categories[key], means, rate))
    return flips

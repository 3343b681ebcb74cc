"""Two-level bootstrap intervals for replicated streams (`--replicas K`): replicas, then task families.

A replica is a whole serving stream: what it happened to teach its method shifts every one of its test
tasks together, so with K replicas the tasks of one replica are not independent draws either. A
resample draws a setting's replicas with replacement AND its families with replacement (replicas and
families are crossed: every replica ran the same tasks), and a figure is the mean over the drawn
(replica, family) cells. The families are drawn exactly as the one-level bootstrap draws them
(`bootstrap.SettingSample.weights`), the replicas from a generator seeded by the same seed, the
setting and the level, so two streams over the same tasks and replica indices get the same resamples
and a paired difference is the difference of the two sides' draws.

The crossed draws' percentile interval is the wrong width: the resampled mean of K replicas varies by
(K - 1) / K of their spread, the (replica x family) residual is counted twice, once in each level's
means, and over a handful of replicas the spread is a t's with K - 1 degrees of freedom, not a
normal's. So each interval is the percentile interval scaled about the point by the square root of
(the mean's variance / the draws' variance), the former from the three draw variances (replicas
alone, families alone, both: `Figure.variance`), and by t_{df}(level) / z(level), with df
Satterthwaite's for the replica term (K - 1 degrees of freedom; families count as a normal's, as in
the one-level bootstrap).
bench/replica_coverage.py measures what that buys: the coverage of these intervals and of the
one-level ones on simulated data of known variance.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from runner.stats.bootstrap import (
    SPECIFIED_DOMAINS,
    BootstrapSpec,
    Cell,
    Interval,
    StreamDraws,
    TaskValue,
    cell_order,
    cells_of,
    interval,
    mean_per_draw,
    resample_counts,
    stream_draws,
)
from runner.stats.outcomes import Outcome, task_values
from runner.stats.stats import t_quantile

__all__ = ["REPLICA_UNIT", "Figure", "Intervals", "ReplicaDraws", "ReplicaValue", "replica_draws", "replica_values",
           "stream_intervals"]

Matrix = npt.NDArray[np.float64]
REPLICA_LEVEL = 2
"""Mixed into the replica generator's seed, so replica draws never repeat the family draws."""
REPLICA_UNIT = "replica, then family within setting (crossed), t-widened"


@dataclass(frozen=True)
class ReplicaValue:
    """One test task's score in one replica (its repeats averaged), or a paired difference of such."""

    replica: int
    task: TaskValue


@dataclass(frozen=True)
class Figure:
    """One figure's draws: both levels resampled, replicas alone (families as they are), families alone.
    An average over settings keeps its settings' figures (`parts`): settings are resampled apart, so
    its variance is theirs added up."""

    point: float
    both: Matrix
    replicas_only: Matrix
    families_only: Matrix
    replicas: int
    families: int
    parts: tuple[Figure, ...] = ()

    def interval(self, level: float, bounds: tuple[float, float]) -> Interval | None:
        found = interval(self.both, level)
        if found is None:
            return None
        scale = self.widening(level)
        low, high = bounds
        return Interval(max(low, self.point - (self.point - found.lo) * scale),
                        min(high, self.point + (found.hi - self.point) * scale))

    def widening(self, level: float) -> float:
        """t_df / z times sqrt(the mean's variance / the draws' variance), df from the replica level."""
        both, target, by_replicas = _variance(self.both), self.variance(), self.replica_variance()
        if both <= 0 or target <= 0 or self.replicas < 2:
            return 1.0
        df = target**2 / self._replica_terms() if by_replicas > 0 else math.inf
        tail = 1 - (1 - level) / 2
        return t_quantile(tail, max(df, 1.0)) / t_quantile(tail, math.inf) * math.sqrt(target / both)

    def variance(self) -> float:
        """The variance of the point over replicas and families, as a two-way random-effects model has it:
        replicas' mean square / (K F) + families' / (K F) - the residual's / (K F). The crossed draws'
        own variance counts the residual twice (in the replica and the family means) and each level's
        spread short by (n - 1) / n; the three draw variances give back all three mean squares."""
        if self.parts:
            return sum(part.variance() for part in self.parts) / len(self.parts) ** 2
        k, f = self.replicas, self.families
        by_replicas, by_families = _variance(self.replicas_only), _variance(self.families_only)
        residual = 0.0
        if k > 1 and f > 1:
            residual = max(0.0, _variance(self.both) - by_replicas - by_families) * k * f / ((k - 1) * (f - 1))
        total = self.replica_variance() + (by_families * f / (f - 1) if f > 1 else by_families) - residual
        return total if total > 0 else _variance(self.both)

    def replica_variance(self) -> float:
        """The replicas' mean square / (K F): the term whose K - 1 degrees of freedom set the t quantile."""
        if self.parts:
            return sum(part.replica_variance() for part in self.parts) / len(self.parts) ** 2
        k = self.replicas
        return _variance(self.replicas_only) * k / (k - 1) if k > 1 else 0.0

    def _replica_terms(self) -> float:
        """Satterthwaite's denominator: each setting's replica term squared over its K - 1."""
        parts = self.parts or (self,)
        n = len(parts) if self.parts else 1
        return sum((part.replica_variance() / n**2) ** 2 / max(1, part.replicas - 1) for part in parts)


def _variance(values: Matrix) -> float:
    kept = values[~np.isnan(values)]
    return float(kept.var()) if kept.size > 1 else 0.0


class _ReplicatedSample:
    """One setting: per replica, family and cell, the sum and count of values."""

    def __init__(self, name: str, values: Sequence[ReplicaValue]) -> None:
        self.name = name
        self.families = sorted({_family(v.task) for v in values})
        self.replicas = sorted({v.replica for v in values})
        self.cells: list[Cell] = sorted({c for v in values for c in cells_of(v.task)}, key=cell_order)
        family_index = {family: i for i, family in enumerate(self.families)}
        replica_index = {replica: i for i, replica in enumerate(self.replicas)}
        cell_index = {cell: i for i, cell in enumerate(self.cells)}
        shape = (len(self.replicas), len(self.families), len(self.cells))
        self.sums, self.counts = np.zeros(shape), np.zeros(shape)
        for value in values:
            at = replica_index[value.replica], family_index[_family(value.task)]
            for cell in cells_of(value.task):
                self.sums[(*at, cell_index[cell])] += value.task.value
                self.counts[(*at, cell_index[cell])] += 1

    def figures(self, spec: BootstrapSpec) -> dict[Cell, Figure]:
        families = resample_counts([spec.seed, zlib.crc32(self.name.encode())], len(self.families), spec.draws)
        replicas = resample_counts([spec.seed, zlib.crc32(self.name.encode()), REPLICA_LEVEL], len(self.replicas),
                                   spec.draws)
        ones_f, ones_r = np.ones((1, len(self.families))), np.ones((1, len(self.replicas)))
        both = self._means(replicas, families)
        by_replicas = self._means(replicas, np.repeat(ones_f, spec.draws, axis=0))
        by_families = self._means(np.repeat(ones_r, spec.draws, axis=0), families)
        point = self._means(ones_r, ones_f)[0]
        families_present = (self.counts.sum(axis=0) > 0).sum(axis=0)
        return {cell: Figure(float(point[i]), both[:, i], by_replicas[:, i], by_families[:, i], len(self.replicas),
                             int(families_present[i]))
                for i, cell in enumerate(self.cells)}

    def _means(self, replica_weights: Matrix, family_weights: Matrix) -> Matrix:
        """draws x cells: sum over (replica, family) of both weights times the sums, over the same of counts."""
        sums = np.einsum("dk,df,kfc->dc", replica_weights, family_weights, self.sums, optimize=True)
        counts = np.einsum("dk,df,kfc->dc", replica_weights, family_weights, self.counts, optimize=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            means: Matrix = sums / counts
        return means


def _family(task: TaskValue) -> str:
    # A task without a family is its own family, as in the one-level bootstrap.
    return task.family or f"task:{task.task_id}"


@dataclass(frozen=True)
class ReplicaDraws:
    """The two-level figures of one stream (or of one paired difference): per setting and cell, and
    Avg H / Avg F (each setting resampled on its own, then averaged per draw)."""

    spec: BootstrapSpec
    settings: Mapping[str, Mapping[Cell, Figure]]
    avg_h: Figure | None
    avg_f: Figure | None
    bounds: tuple[float, float]
    """The range a figure can take (scores 0..100, differences -100..100): intervals are cut to it."""

    def setting_interval(self, setting: str, cell: Cell) -> Interval | None:
        """None, as in the one-level bootstrap, for a figure over a single family: resampling it always
        draws the same tasks, so the families' part of the noise is not measured."""
        figure = self.settings.get(setting, {}).get(cell)
        return None if figure is None or figure.families < 2 else figure.interval(self.spec.level, self.bounds)

    def avg_h_interval(self) -> Interval | None:
        return _average_interval(self.avg_h, self.spec.level, self.bounds)

    def avg_f_interval(self) -> Interval | None:
        return _average_interval(self.avg_f, self.spec.level, self.bounds)


def _average_interval(figure: Figure | None, level: float, bounds: tuple[float, float]) -> Interval | None:
    if figure is None or all(part.families < 2 for part in figure.parts):
        return None
    return figure.interval(level, bounds)


def replica_draws(values: Iterable[ReplicaValue], spec: BootstrapSpec,
                  bounds: tuple[float, float] = (0.0, 100.0)) -> ReplicaDraws:
    by_setting: dict[str, list[ReplicaValue]] = {}
    for value in values:
        by_setting.setdefault(value.task.setting, []).append(value)
    settings = {name: _ReplicatedSample(name, found).figures(spec) for name, found in by_setting.items()}
    hidden = [cells[("hidden", None)] for cells in settings.values() if ("hidden", None) in cells]
    specified = [cells[("fully_specified", None)] for name, cells in settings.items()
                 if ("fully_specified", None) in cells and name.split("_")[0] in SPECIFIED_DOMAINS]
    return ReplicaDraws(spec, settings, _averaged(hidden), _averaged(specified), bounds)


def _averaged(figures: list[Figure]) -> Figure | None:
    """The mean over settings, per draw and for the point, keeping the settings as its parts."""
    if not figures:
        return None
    both = mean_per_draw([f.both for f in figures])
    by_replicas = mean_per_draw([f.replicas_only for f in figures])
    by_families = mean_per_draw([f.families_only for f in figures])
    assert both is not None and by_replicas is not None and by_families is not None
    return Figure(sum(f.point for f in figures) / len(figures), both, by_replicas, by_families,
                  min(f.replicas for f in figures), sum(f.families for f in figures), tuple(figures))


class Intervals(Protocol):
    """What a report or a comparison asks of its draws, one level or two."""

    def setting_interval(self, setting: str, cell: Cell) -> Interval | None: ...

    def avg_h_interval(self) -> Interval | None: ...

    def avg_f_interval(self) -> Interval | None: ...


def replica_values(outcomes: Iterable[Outcome]) -> list[ReplicaValue]:
    """One value per (replica, task): its mean reward over repeats, x 100."""
    grouped: dict[int, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        grouped[outcome.replica].append(outcome)
    return [ReplicaValue(replica, value) for replica, found in sorted(grouped.items()) for value in task_values(found)]


def stream_intervals(outcomes: Sequence[Outcome], spec: BootstrapSpec, one_level: StreamDraws | None = None,
                     ) -> Intervals:
    """One stream's intervals: two-level over its replicas when it has two or more, else the one-level
    family bootstrap exactly as before replicas existed (`one_level`, when the caller has drawn it)."""
    if len({o.replica for o in outcomes}) < 2:
        return one_level or stream_draws(task_values(outcomes), spec)
    return replica_draws(replica_values(outcomes), spec)

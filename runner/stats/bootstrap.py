"""Bootstrap intervals that resample task families within each setting.

Tasks of one family (the evaluator's `family`: one decision rule, one recipe, one buyer profile) are
not independent draws: they succeed or fail together when a method learns or misses that rule. So a
resample draws a setting's families with replacement, each bringing all its test tasks, and recomputes
every figure from them: a setting's H and F, its per-window H and F, and Avg H / Avg F (the mean over
settings, each setting resampled on its own). The percentile interval of those draws is the figure's
95% interval. A figure over a single family has none: every draw brings the same tasks, so its
percentile "interval" is the point itself, zero wide; it is reported as no interval (1 family). Below
`MIN_FAMILIES`, and where every task agrees, `StreamDraws.decided` gives what stands instead: a note, or
the exact interval (`runner.stats.exact`).

A resample is a weight matrix: how many times each family is drawn, per draw. It depends only on the
setting's name, its sorted family list, the seed and the number of draws, so two streams over the
same tasks get the very same resamples, and a paired difference (`paired_draws`) is exactly the
difference of the two sides' draws.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from runner.stats.exact import ONE_FAMILY_EACH, Agreement, agreed_interval, too_few

__all__ = ["DEFAULT_SPEC", "DRAWS", "LEVEL", "SEED", "BootstrapSpec", "Cell", "Interval", "SettingSample",
           "StreamDraws", "TaskValue", "cell_order", "cells_of", "interval", "mean_per_draw", "paired_values",
           "resample_counts", "stream_draws"]

DRAWS = 2000
SEED = 20240611
LEVEL = 0.95
SPECIFIED_DOMAINS = ("retail", "banking")

Cell = tuple[str, int | None]
"""(category, window): a setting's score is cell (category, None); a window's is (category, window)."""

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class BootstrapSpec:
    """How intervals are drawn; reports record it so anyone can reproduce them."""

    draws: int = DRAWS
    seed: int = SEED
    level: float = LEVEL
    unit: str = "family within setting"


DEFAULT_SPEC = BootstrapSpec()


@dataclass(frozen=True)
class Interval:
    lo: float
    hi: float

    def as_list(self) -> list[float]:
        return [self.lo, self.hi]

    def excludes(self, value: float) -> bool:
        return value < self.lo or value > self.hi


@dataclass(frozen=True)
class TaskValue:
    """One test task of one setting: its score (reward x 100, or a paired difference of scores)."""

    setting: str
    task_id: str
    family: str
    category: str
    window: int
    value: float


class SettingSample:
    """One setting's tasks folded into families: per family and cell, the sum and count of values."""

    def __init__(self, name: str, tasks: Sequence[TaskValue]) -> None:
        self.name = name
        # A task without a family is its own family: nothing is known to tie it to others.
        self.families = sorted({t.family or f"task:{t.task_id}" for t in tasks})
        self.cells: list[Cell] = sorted({c for t in tasks for c in cells_of(t)}, key=cell_order)
        family_index = {family: i for i, family in enumerate(self.families)}
        cell_index = {cell: i for i, cell in enumerate(self.cells)}
        self.sums = np.zeros((len(self.families), len(self.cells)))
        self.counts = np.zeros((len(self.families), len(self.cells)))
        self.low = np.full(len(self.cells), np.inf)
        self.high = np.full(len(self.cells), -np.inf)
        for task in tasks:
            row = family_index[task.family or f"task:{task.task_id}"]
            for cell in cells_of(task):
                column = cell_index[cell]
                self.sums[row, column] += task.value
                self.counts[row, column] += 1
                self.low[column] = min(self.low[column], task.value)
                self.high[column] = max(self.high[column], task.value)

    def agreements(self) -> dict[Cell, Agreement]:
        """The cells whose every task has one value (the bootstrap's draws of them never vary)."""
        counts, present = self.counts.sum(axis=0), (self.counts > 0).sum(axis=0)
        return {cell: Agreement(float(self.low[i]), int(counts[i]), int(present[i]))
                for i, cell in enumerate(self.cells) if self.low[i] == self.high[i]}

    def weights(self, spec: BootstrapSpec) -> Matrix:
        """draws x families: how often each family is drawn in each resample."""
        return resample_counts([spec.seed, zlib.crc32(self.name.encode())], len(self.families), spec.draws)

    def draws(self, spec: BootstrapSpec) -> Matrix:
        """draws x cells: each cell's mean in each resample (NaN when a resample holds no such task)."""
        weights = self.weights(spec)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (weights @ self.sums) / (weights @ self.counts)

    def point(self) -> Matrix:
        with np.errstate(invalid="ignore", divide="ignore"):
            means: Matrix = self.sums.sum(axis=0) / self.counts.sum(axis=0)
        return means


def resample_counts(seed: list[int], n: int, draws: int) -> Matrix:
    """draws x n: how often each of n items is drawn in each resample of n with replacement, from a
    generator seeded by `seed` (the same seed, the same counts)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(draws, n))
    # Count each item's picks per draw in one bincount over (draw, item) cells.
    cells = (picks + n * np.arange(draws)[:, None]).ravel()
    return np.bincount(cells, minlength=draws * n).reshape(draws, n).astype(np.float64)


def cells_of(task: TaskValue) -> tuple[Cell, Cell]:
    return (task.category, None), (task.category, task.window)


def cell_order(cell: Cell) -> tuple[str, int]:
    return cell[0], -1 if cell[1] is None else cell[1]


@dataclass(frozen=True)
class StreamDraws:
    """The resampled figures of one stream (or of one paired difference): per setting and cell, and
    the averages over settings. Each array holds one value per draw."""

    spec: BootstrapSpec
    settings: Mapping[str, Mapping[Cell, Matrix]]
    avg_h: Matrix | None
    avg_f: Matrix | None
    points: Mapping[str, Mapping[Cell, float]]
    """The figures on the data as it is (what the report prints), per setting and cell."""
    cases: Mapping[str, Mapping[Cell, int]]
    """Tasks behind each figure."""
    families: Mapping[str, Mapping[Cell, int]] = field(default_factory=dict)
    """Task families behind each figure. Resampling one family always draws the same tasks: its
    "interval" would be the point itself, zero wide, and is no interval at all (None below)."""
    agreements: Mapping[str, Mapping[Cell, Agreement]] = field(default_factory=dict)
    """The figures whose every task has one value, per setting and cell."""
    paired: bool = False
    """The values are paired differences (A - B), not scores: an agreement at 0 is every pair tied."""

    def decided(self, setting: str, cell: Cell) -> Interval | str | None:
        """What stands for the bootstrap's interval of a figure, where something must: a note when it
        rests on too few families, the exact interval (or a note) when every task agrees; None: the
        bootstrap's interval stands (`runner.stats.exact` says why each)."""
        note = too_few(self.families_of(setting, cell), self.cases.get(setting, {}).get(cell, 0))
        if note is not None:
            return note
        agreement = self.agreements.get(setting, {}).get(cell)
        if agreement is None:
            return None
        exact = agreed_interval(agreement, self.spec.level, self.paired)
        return exact if isinstance(exact, str) else Interval(*exact)

    def decided_avg(self, category: str) -> Interval | str | None:
        """As `decided`, for Avg H (hidden) or Avg F. A setting with too few families leaves the average
        without an interval too (its draws would undercover it). Where some settings agree, whose draws
        never vary and would add no width, each setting's bound is taken at level 1 - a/k (Bonferroni
        over k settings: the exact one where it agrees, its percentile interval elsewhere) and the
        bounds are averaged; None: no setting agrees and the bootstrap's interval stands."""
        names = [name for name, cells in self.families.items() if (category, None) in cells
                 and (category == "hidden" or name.split("_")[0] in SPECIFIED_DOMAINS)]
        if not names:
            return None
        if self.one_family_each(category):
            return ONE_FAMILY_EACH
        for name in names:
            note = too_few(self.families_of(name, (category, None)), self.cases[name][(category, None)])
            if note is not None:
                return f"{name}: {note}"
        if not any((category, None) in self.agreements.get(n, {}) for n in names):
            return None
        level = 1 - (1 - self.spec.level) / len(names)
        bounds: list[tuple[float, float]] = []
        for name in names:
            agreement = self.agreements.get(name, {}).get((category, None))
            if agreement is not None:
                exact = agreed_interval(agreement, level, self.paired)
                if isinstance(exact, str):
                    return f"{name}: {exact}"
                bounds.append(exact)
                continue
            drawn = interval(self.settings[name][(category, None)], level)
            if drawn is None:
                return None
            bounds.append((drawn.lo, drawn.hi))
        return Interval(sum(lo for lo, _ in bounds) / len(bounds), sum(hi for _, hi in bounds) / len(bounds))

    def families_of(self, setting: str, cell: Cell) -> int:
        return self.families.get(setting, {}).get(cell, 0)

    def one_family_each(self, category: str) -> bool:
        """Every setting averaged into Avg H (hidden) or Avg F has a single family of `category`:
        the average's draws never vary, so it has no interval either."""
        counts = [cells[(category, None)] for name, cells in self.families.items() if (category, None) in cells
                  and (category == "hidden" or name.split("_")[0] in SPECIFIED_DOMAINS)]
        return bool(counts) and max(counts) < 2

    def point(self, setting: str, cell: Cell) -> float | None:
        return self.points.get(setting, {}).get(cell)

    def avg_point(self, category: str) -> float | None:
        values = [cells[(category, None)] for name, cells in self.points.items() if (category, None) in cells
                  and (category == "hidden" or name.split("_")[0] in SPECIFIED_DOMAINS)]
        return sum(values) / len(values) if values else None

    def avg_cases(self, category: str) -> int:
        return sum(cells.get((category, None), 0) for name, cells in self.cases.items()
                   if category == "hidden" or name.split("_")[0] in SPECIFIED_DOMAINS)

    def setting_interval(self, setting: str, cell: Cell) -> Interval | None:
        """None when there is nothing to resample, or a single family (`families_of` tells which)."""
        values = self.settings.get(setting, {}).get(cell)
        if values is None or (self.families and self.families_of(setting, cell) < 2):
            return None
        return interval(values, self.spec.level)

    def avg_h_interval(self) -> Interval | None:
        if self.avg_h is None or (self.families and self.one_family_each("hidden")):
            return None
        return interval(self.avg_h, self.spec.level)

    def avg_f_interval(self) -> Interval | None:
        if self.avg_f is None or (self.families and self.one_family_each("fully_specified")):
            return None
        return interval(self.avg_f, self.spec.level)


def stream_draws(tasks: Iterable[TaskValue], spec: BootstrapSpec = DEFAULT_SPEC, paired: bool = False) -> StreamDraws:
    """Resample every setting of a stream on its own and average the settings per draw, as Avg H and
    Avg F weigh every setting once. `paired`: the values are paired differences (`paired_values`)."""
    by_setting: dict[str, list[TaskValue]] = {}
    for task in tasks:
        by_setting.setdefault(task.setting, []).append(task)
    settings: dict[str, dict[Cell, Matrix]] = {}
    points: dict[str, dict[Cell, float]] = {}
    cases: dict[str, dict[Cell, int]] = {}
    families: dict[str, dict[Cell, int]] = {}
    agreements: dict[str, dict[Cell, Agreement]] = {}
    for name, setting_tasks in by_setting.items():
        sample = SettingSample(name, setting_tasks)
        draws, point, counts = sample.draws(spec), sample.point(), sample.counts.sum(axis=0)
        settings[name] = {cell: draws[:, i] for i, cell in enumerate(sample.cells)}
        points[name] = {cell: float(point[i]) for i, cell in enumerate(sample.cells)}
        cases[name] = {cell: int(counts[i]) for i, cell in enumerate(sample.cells)}
        present = (sample.counts > 0).sum(axis=0)
        families[name] = {cell: int(present[i]) for i, cell in enumerate(sample.cells)}
        agreements[name] = sample.agreements()
    hidden = [cells[("hidden", None)] for cells in settings.values() if ("hidden", None) in cells]
    specified = [cells[("fully_specified", None)] for name, cells in settings.items()
                 if ("fully_specified", None) in cells and name.split("_")[0] in SPECIFIED_DOMAINS]
    return StreamDraws(spec=spec, settings=settings, avg_h=mean_per_draw(hidden), avg_f=mean_per_draw(specified),
                       points=points, cases=cases, families=families, agreements=agreements, paired=paired)


def mean_per_draw(columns: list[Matrix]) -> Matrix | None:
    """Per draw, the mean over settings that have a value in that draw."""
    if not columns:
        return None
    stacked = np.vstack(columns)
    present = ~np.isnan(stacked)
    with np.errstate(invalid="ignore", divide="ignore"):
        total: Matrix = np.where(present, stacked, 0.0).sum(axis=0) / present.sum(axis=0)
    return total


def interval(values: Matrix, level: float = LEVEL) -> Interval | None:
    """The percentile interval of the draws (NaN draws, which lack the figure, left out)."""
    kept = values[~np.isnan(values)]
    if kept.size == 0:
        return None
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(kept, [tail, 100 - tail])
    return Interval(float(lo), float(hi))


def paired_values(a: Sequence[TaskValue], b: Sequence[TaskValue]) -> list[TaskValue]:
    """Per task, a's value minus b's: the input of a paired bootstrap. Both sides must hold the same
    (setting, task) set; the caller refuses anything else before getting here."""
    other = {(t.setting, t.task_id): t.value for t in b}
    if len(other) != len(a) or any((t.setting, t.task_id) not in other for t in a):
        raise ValueError("a paired comparison needs the same tasks on both sides")
    return [TaskValue(t.setting, t.task_id, t.family, t.category, t.window, t.value - other[(t.setting, t.task_id)])
            for t in a]

"""Coverage of the report's intervals on simulated replicated streams whose variance is known.

Each seed draws one stream of K replicas over S settings of F families x M tasks, a score per
(replica, task) of
    50 + a[replica, setting] + b[family] + e[replica, task]
with a ~ N(0, sd_replica^2) (what one serving stream happened to teach: every task of a replica and
setting moves with it), b ~ N(0, sd_family^2) (a decision rule easy or hard for everyone) and e ~ N(0,
sd_task^2) (one episode's luck). The truth is 50 in every setting, so Avg H is 50. For each seed the
two-level interval (`runner.stats.replicated`: replicas, then families, t-widened) and the one-level
interval the report gives a single serving stream (`runner.stats.bootstrap`: families of the
replica-averaged tasks) are drawn with the report's own code at its level; the table is the share of
seeds whose Avg H interval holds 50, per regime and K.

    python -m bench.replica_coverage [--seeds 200] [--draws 2000] [--replicas 3,5,10]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from runner.stats.bootstrap import DEFAULT_SPEC, BootstrapSpec, TaskValue, stream_draws
from runner.stats.replicated import ReplicaValue, replica_draws

__all__ = ["Regime", "REGIMES", "coverage", "main"]

TRUTH = 50.0


@dataclass(frozen=True)
class Regime:
    name: str
    sd_replica: float
    sd_family: float
    sd_task: float
    settings: int = 3
    families: int = 20
    tasks_per_family: int = 4


REGIMES = (
    Regime("balanced", sd_replica=4.0, sd_family=6.0, sd_task=20.0),
    Regime("replica-dominated", sd_replica=8.0, sd_family=3.0, sd_task=10.0),
    Regime("family-dominated", sd_replica=1.0, sd_family=10.0, sd_task=10.0),
)


def simulate(regime: Regime, replicas: int, seed: int) -> list[ReplicaValue]:
    rng = np.random.default_rng([seed, replicas])
    values = []
    for s in range(regime.settings):
        shift = rng.normal(0.0, regime.sd_replica, replicas)
        family = rng.normal(0.0, regime.sd_family, regime.families)
        noise = rng.normal(0.0, regime.sd_task, (replicas, regime.families, regime.tasks_per_family))
        for k in range(replicas):
            for f in range(regime.families):
                for t in range(regime.tasks_per_family):
                    score = TRUTH + shift[k] + family[f] + noise[k, f, t]
                    values.append(ReplicaValue(k, TaskValue(f"sim_l{s}", f"t{f}-{t}", f"f{f}", "hidden", 0,
                                                            float(score))))
    return values


def one_level(values: Sequence[ReplicaValue]) -> list[TaskValue]:
    """The replicas' mean per task: what the one-level bootstrap resamples."""
    sums: dict[tuple[str, str], list[float]] = {}
    first: dict[tuple[str, str], TaskValue] = {}
    for value in values:
        key = (value.task.setting, value.task.task_id)
        sums.setdefault(key, []).append(value.task.value)
        first.setdefault(key, value.task)
    return [replace(first[key], value=sum(found) / len(found)) for key, found in sums.items()]


def coverage(regime: Regime, replicas: int, seeds: int, spec: BootstrapSpec) -> tuple[float, float, float, float]:
    """(two-level coverage, one-level coverage, two-level mean width, one-level mean width) of Avg H."""
    two_hits = one_hits = 0
    two_width = one_width = 0.0
    bounds = (-1e9, 1e9)  # simulated scores are not cut to 0..100
    for seed in range(seeds):
        values = simulate(regime, replicas, seed)
        spec_seed = replace(spec, seed=spec.seed + seed)
        two = replica_draws(values, spec_seed, bounds).avg_h_interval()
        one = stream_draws(one_level(values), spec_seed).avg_h_interval()
        assert two is not None and one is not None
        two_hits += two.lo <= TRUTH <= two.hi
        one_hits += one.lo <= TRUTH <= one.hi
        two_width += two.hi - two.lo
        one_width += one.hi - one.lo
    return two_hits / seeds, one_hits / seeds, two_width / seeds, one_width / seeds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--draws", type=int, default=DEFAULT_SPEC.draws)
    parser.add_argument("--replicas", default="3,5,10")
    args = parser.parse_args(argv)
    spec = replace(DEFAULT_SPEC, draws=args.draws)
    print(f"Avg H interval coverage of the truth over {args.seeds} seeds ({spec.level:.0%} intervals, "
          f"{spec.draws} draws; settings x families x tasks = 3 x 20 x 4)")
    print("| regime | sd replica / family / task | K | two-level | one-level | width two / one | s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for regime in REGIMES:
        for replicas in (int(k) for k in args.replicas.split(",")):
            started = time.perf_counter()
            two, one, two_width, one_width = coverage(regime, replicas, args.seeds, spec)
            print(f"| {regime.name} | {regime.sd_replica:g} / {regime.sd_family:g} / {regime.sd_task:g} | "
                  f"{replicas} | {two:.3f} | {one:.3f} | {two_width:.1f} / {one_width:.1f} | "
                  f"{time.perf_counter() - started:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

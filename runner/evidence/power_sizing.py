"""Sizing a sweep from a pilot's noise (`shiftbench power RUN_ID --stream M/METHOD --mde D [--power 0.8]`).

Reads the pilot's replicated stream (`--replicas K`, K >= 2) from the journal, splits its between-replica
variance (`runner.stats.power`), and for test sets of the pilot's size, larger pilots and the full
test set prints the replicas per stream that detect D points of Avg H (or Avg F) at the given power, the
MDE that many achieve, and what that sweep of the stream would cost, projected from the pilot's own
episodes exactly as `shiftbench estimate` projects (nothing is sent). What the command prints is
`runner.cli.power`'s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from methods.registry import get_method_spec
from runner.config.plan import Stream, plan_streams
from runner.config.run_dataset import dataset_of_run
from runner.config.settings import config_from_json
from runner.cost.cache_savings import run_price_table
from runner.cost.estimate import measure, projection_rows
from runner.cost.projection import Cell
from runner.evidence.run_evidence import load_evidence
from runner.journal import read_only
from runner.stats.noise import mde
from runner.stats.power import SettingVariance, predicted_sd, replicas_needed, setting_variances
from simulators.errors import ShiftbenchInputError

__all__ = ["PowerRow", "SettingVariance", "Sizing", "size_sweep"]

_CATEGORY = {"avg_h": "hidden", "avg_f": "fully_specified"}


@dataclass(frozen=True)
class PowerRow:
    per_window: int
    """Test tasks per window (0: the whole test set)."""
    tasks: dict[str, int]
    """Tasks of the category per setting at that size."""
    sd: float
    """Predicted SD of one replica's Avg H (or Avg F)."""
    replicas: int | None
    """Per stream, to detect the difference; None past the limit."""
    achieved_mde: float | None
    cost_usd: float | None
    """The stream's sweep at that size and replicas (None: its model has no price)."""


@dataclass(frozen=True)
class Sizing:
    """A pilot's stream sized: its noise per setting, and a row per test-set size."""

    stream: str
    """`model/method`."""
    replicas: int
    """The pilot's replicas of the stream."""
    category: str
    """The tasks the metric covers (`hidden` for Avg H, `fully_specified` for Avg F)."""
    variances: list[SettingVariance]
    rows: list[PowerRow]


async def size_sweep(journal: Path, run_id: str, stream: str, difference: float, power: float,
                     metric: str) -> Sizing:
    """The replicas (and cost) that detect `difference` points of `metric` at `power`, per test-set size."""
    evidence = await load_evidence(journal, run_id)
    ref, outcomes = evidence.stream(stream, "--stream")
    replicas = len({o.replica for o in outcomes})
    if replicas < 2:
        raise ShiftbenchInputError(f"--stream: {ref} ran {replicas} replica; power needs the noise between at least "
                                   "two (run the pilot with --replicas 3 or more)")
    variances = setting_variances(outcomes, _CATEGORY[metric])
    if not variances:
        raise ShiftbenchInputError(f"--metric: {ref} has no finished {_CATEGORY[metric]} test tasks in every replica")
    async with read_only(journal) as reader:
        run = await reader.run(run_id)
        assert run is not None  # load_evidence found it
        measured = await measure(reader, run_id)
    config = config_from_json(run.config)
    dataset = dataset_of_run(run, "restore it to size a sweep from the run")
    scenarios = [dataset.scenarios[v.setting] for v in variances]
    rows = []
    for per_window in _sizes(config.pilot):
        planned = plan_streams([ref.model], [ref.method], scenarios, learns=lambda n: get_method_spec(n).learns,
                               pilot=per_window, repeats=config.repeats)
        tasks = {s.scenario.name: sum(1 for t in s.test if t.category == _CATEGORY[metric]) for s in planned}
        sd = predicted_sd(variances, tasks)
        needed = replicas_needed(sd, difference, power)
        cost = None
        if needed is not None and ref.model in run_price_table(run.config):
            counts = _counts(planned, needed)
            found = projection_rows(measured, [ref.model], [ref.method], counts, run_price_table(run.config))
            cost = found[0].projected_usd if found else None
        rows.append(PowerRow(per_window, tasks, sd, needed, None if needed is None else mde(sd, needed, power), cost))
    return Sizing(str(ref), replicas, _CATEGORY[metric], variances, rows)


def _sizes(pilot: int) -> list[int]:
    """The pilot's tasks per window, then 2x, 4x ... up to 64x, then the whole test set (0)."""
    if pilot <= 0:
        return [0]
    return [pilot * 2**k for k in range(7)] + [0]


def _counts(streams: Sequence[Stream], replicas: int) -> dict[str, dict[Cell, int]]:
    """Episodes of the stream's sweep at that size: serving where the method learns, test x repeats, per replica."""
    counts: dict[str, dict[Cell, int]] = defaultdict(dict)
    for s in streams:
        counts[s.method][(s.scenario.name, "serving")] = len(s.serving) * replicas
        counts[s.method][(s.scenario.name, "test")] = len(s.test) * s.repeats * replicas
    return dict(counts)

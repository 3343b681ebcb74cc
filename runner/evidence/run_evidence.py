"""A run's evidence read from a journal, for `compare`, `verify`, `gate` and `power`: its test outcomes per
stream, two streams' comparison, every episode re-graded, the run judged against rules.

Each reads through `runner.journal`'s named queries on a read-only connection and returns what it found;
what the commands print and their exit codes are `runner.cli.evidence`'s. Nothing here writes to the
journal or drives a run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from runner.config.plan import plan_streams
from runner.config.prices import PRICE_FIELDS
from runner.config.run_dataset import dataset_of_run
from runner.config.settings import config_from_json
from runner.cost.pilot import full_task_count, project_cost
from runner.evidence.compare import Comparison, compare_streams
from runner.evidence.gate_run import GateOutcome, gate_run
from runner.evidence.gates import load_rules
from runner.evidence.regrade import Regrade, regrade
from runner.journal import Reader, RunRow, read_only
from runner.report import build_report
from runner.stats.outcomes import Outcome, RunEvidence, parse_selector
from simulators.errors import ShiftbenchInputError
from simulators.protocol import Task
from simulators.record import EpisodeRecord
from simulators.registry import get_domain

__all__ = ["Regraded", "gate_outcome", "load_comparison", "load_evidence", "regrade_run"]


async def _run_row(reader: Reader, journal: Path, run_id: str) -> RunRow:
    row = await reader.run(run_id)
    if row is None:
        raise ShiftbenchInputError(f"{journal}: no run '{run_id}' in this journal; "
                                   f"`shiftbench runs --journal {journal}` lists the runs it holds")
    return row


async def load_evidence(journal: Path, run_id: str) -> RunEvidence:
    async with read_only(journal) as reader:
        row = await _run_row(reader, journal, run_id)
        rows = await reader.test_outcomes(run_id)
    outcomes: dict[tuple[str, str], list[Outcome]] = {}
    for found in rows:
        outcome = Outcome(*found)
        outcomes.setdefault((outcome.model, outcome.method), []).append(outcome)
    return RunEvidence(run_id=run_id, dataset_fingerprint=row.dataset_fingerprint, code_version=row.code_version,
                       config_hash=row.config_hash, outcomes=outcomes)


# ---------------------------------------------------------------------------- compare

async def load_comparison(journal: Path, a_text: str, b_text: str,
                          shared: bool = False) -> tuple[Comparison, RunEvidence, RunEvidence]:
    """The comparison of two streams (`RUN_ID` or `RUN_ID:model/method`), with each side's run evidence
    (for provenance); refused with one line unless both ran the same dataset and finished the same tasks
    (`shared`: the tasks both finished)."""
    (a_run, a_stream), (b_run, b_stream) = parse_selector(a_text), parse_selector(b_text)
    a_evidence = await load_evidence(journal, a_run)
    b_evidence = a_evidence if b_run == a_run else await load_evidence(journal, b_run)
    if a_evidence.dataset_fingerprint != b_evidence.dataset_fingerprint:
        raise ShiftbenchInputError(
            f"compare: {a_run} and {b_run} ran on different datasets (fingerprints "
            f"{a_evidence.dataset_fingerprint[:12]} and {b_evidence.dataset_fingerprint[:12]}); compare runs "
            "of the same dataset")
    a_ref, a_outcomes = a_evidence.stream(a_stream, "A") if a_stream else a_evidence.only_stream("A")
    b_ref, b_outcomes = b_evidence.stream(b_stream, "B") if b_stream else b_evidence.only_stream("B")
    return compare_streams(a_ref, a_outcomes, b_ref, b_outcomes, shared=shared), a_evidence, b_evidence


# ---------------------------------------------------------------------------- verify

@dataclass(frozen=True)
class Regraded:
    """Every journaled episode of a run re-graded: how many, per stream replica, and those that differ."""

    checked: int
    replicas: Counter[int]
    mismatches: list[tuple[str, Regrade]]
    """(unit id, its re-grade) where the stored reward differs."""


async def regrade_run(journal: Path, run_id: str) -> Regraded:
    """Re-grade every journaled episode from its recorded actions, without a model."""
    async with read_only(journal) as reader:
        row = await _run_row(reader, journal, run_id)
        episodes = await reader.recorded_episodes(run_id)
    dataset = dataset_of_run(row, "restore it to verify the run")
    tasks: dict[tuple[str, str, str], Task] = {
        (name, task.split, task.task_id): task for name, scenario in dataset.scenarios.items()
             for task in (*scenario.serving, *scenario.test)}
    mismatches: list[tuple[str, Regrade]] = []
    for episode in episodes:
        task = tasks.get((episode.scenario, episode.phase, episode.task_id))
        if task is None:
            raise ShiftbenchInputError(f"verify: task {episode.task_id} of {episode.scenario} is not in the dataset "
                                       f"{row.dataset_path}; it changed since the run")
        scenario = dataset.scenarios[episode.scenario]
        result = await regrade(get_domain(scenario.domain), scenario.environment, task,
                               EpisodeRecord.from_json(orjson.loads(episode.record)), episode.reward, episode.judge,
                               orjson.loads(episode.grade_details))
        if not result.matches:
            mismatches.append((episode.unit_id, result))
    return Regraded(len(episodes), Counter(episode.replica for episode in episodes), mismatches)


# ---------------------------------------------------------------------------- gate

async def gate_outcome(journal: Path, run_id: str, rules_path: Path) -> GateOutcome:
    """The run judged against the rules file (its verdict carries the exit code)."""
    rules = load_rules(rules_path)
    evidence = await load_evidence(journal, run_id)
    report = await build_report(journal, run_id)
    streams = {f"{s.model}/{s.method}": s for s in report.streams}
    projected = 0.0
    if rules.pilot is not None:
        async with read_only(journal) as reader:
            row = await _run_row(reader, journal, run_id)
        projected = _projected_full_cost(row, report.cost_usd.total, sum(s.episodes for s in report.streams))
    return gate_run(evidence, streams, rules, projected, unbilled=_unbilled(report.provenance.models))


def _unbilled(models: dict[str, Any]) -> frozenset[str]:
    """The models whose calls bill nothing: no price (`--allow-unpriced`) or every rate 0 (offline)."""
    def free(entry: Any) -> bool:
        price = entry.get("price_per_million_tokens") if isinstance(entry, dict) else None
        return not isinstance(price, dict) or not any(price.get(rate) for rate in PRICE_FIELDS)
    return frozenset(name for name, entry in models.items() if free(entry))


def _projected_full_cost(row: RunRow, spent: float, episodes: int) -> float:
    """The run's spend per finished episode times the tasks of the same sweep without its pilot cut."""
    config = config_from_json(row.config)
    dataset = dataset_of_run(row, "restore it to gate the run")
    streams = plan_streams(config.models, config.methods, [dataset.scenarios[n] for n in config.scenarios],
                           learns=config.learns(), repeats=config.repeats,
                           replicas=config.replicas)
    return project_cost(spent, episodes, full_task_count(streams))

"""Benchmark 1: offline throughput of whole sweeps on the in-process scripted model.

Blind + oracle over the nine built-in scenarios (test sets only: neither method learns), then learning
methods (icl_full, rag) over the three L1 scenarios, whose serving streams run strictly in order with a
method checkpoint journaled after every serving episode. Reported: episodes/s and wall time of the
engine, and where the time went: the scripted agent (the simulated model's CPU), the method's calls,
and the journal (transactions, batches per transaction, time callers waited for commits, time the
writer spent inside transactions, checkpoint bytes).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.harness import EngineRun, run_streams, wait_ms
from bench.section import Row, Section
from methods.registry import get_method_spec
from runner.config.plan import plan_streams
from runner.config.settings import SweepConfig
from simulators.dataset import load_dataset
from simulators.protocol import SCENARIOS

__all__ = ["CASES", "Case", "run_offline"]

L1 = ("banking_l1", "pitch_l1", "retail_l1")


@dataclass(frozen=True)
class Case:
    name: str
    methods: tuple[str, ...]
    scenarios: tuple[str, ...]
    pilot: int
    """0: every task; N: the first N serving and N test tasks of each window."""


CASES = {
    "full": (Case("blind+oracle", ("blind", "oracle"), SCENARIOS, 0),
             Case("icl_full", ("icl_full",), L1, 0),
             Case("rag", ("rag",), L1, 0)),
    "quick": (Case("blind+oracle", ("blind", "oracle"), SCENARIOS, 8),
              Case("icl_full", ("icl_full",), L1, 20),
              Case("rag", ("rag",), L1, 20)),
    "smoke": (Case("blind+oracle", ("blind", "oracle"), ("banking_l1", "pitch_l1"), 2),
              Case("icl_full", ("icl_full",), ("banking_l1",), 2)),
}

COLUMNS = ["case", "scope", "episodes", "serving", "wall_s", "episodes_per_s", "serving_path_s", "agent_s",
           "method_s", "transactions", "batches_per_txn", "writer_s", "writer_share", "checkpoint_mb",
           "serving_commit_ms"]


async def _one(case: Case, suite: Path, workdir: Path) -> EngineRun:
    config = SweepConfig(models=("scripted",), methods=case.methods, scenarios=case.scenarios, dataset=str(suite),
                         pilot=case.pilot).validate("bench")
    dataset = load_dataset(suite, only=case.scenarios)
    scenarios = [dataset.scenarios[name] for name in case.scenarios]
    streams = plan_streams(config.models, config.methods, scenarios,
                           learns=lambda name: get_method_spec(name).learns, pilot=config.pilot,
                           replicas=config.replicas)
    return await run_streams(config, dataset, streams, workdir / f"{case.name}.sqlite", time_models=True)


def _row(case: Case, run: EngineRun) -> Row:
    journal = run.journal
    writer = journal["writer_s"]
    return {
        "case": case.name, "scope": f"{len(case.scenarios)} scen" + (f", pilot {case.pilot}" if case.pilot else ""),
        "episodes": run.episodes, "serving": run.serving, "test": run.test, "turns": run.turns,
        "wall_s": round(run.wall_s, 2), "episodes_per_s": round(run.episodes_per_s, 1),
        "serving_path_s": round(max((s.serving_done_s for s in run.streams), default=0.0), 2),
        "agent_s": round(run.model_s, 2), "agent_share": round(run.model_s / run.wall_s, 3),
        "method_s": round(sum(run.methods.values()), 2), "method_detail": run.methods,
        "transactions": journal["transactions"], "batches": journal["batches"],
        "batches_per_txn": journal["batches_per_transaction"],
        "mean_commit_ms": journal["mean_commit_ms"], "serving_commit_ms": wait_ms(journal, "checkpoint"),
        "journal_waits": journal["waits"],
        "writer_s": writer, "writer_share": None if writer is None else round(writer / run.wall_s, 3),
        "mb_written": journal["mb_written"], "checkpoints": journal["checkpoints"],
        "checkpoint_mb": journal["checkpoint_mb"],
    }


async def run_offline(suite: Path, mode: str) -> Section:
    section = Section(
        "offline throughput", "Whole sweeps on the scripted model (engine time; dataset load excluded). "
        "agent_s: inside the scripted model; writer_s: the journal writer inside transactions "
        "(runs in the writer's thread, overlapping the loop); serving_path_s: when the last serving "
        "episode was journaled; serving_commit_ms: mean wait of a serving block for its commit (on the "
        "critical path).", COLUMNS)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="shiftbench-offline-") as tmp:
        for case in CASES[mode]:
            section.rows.append(_row(case, await _one(case, suite, Path(tmp))))
    section.seconds = time.perf_counter() - started
    return section

"""The scores section of a report and its own seal: equal for equal results, wherever they were run.

The report's `sha256` seals the whole document, run id, journal, times, latencies and machine included,
so two runs of the same sweep never share it. `scores_seal` seals only what the results are: the config
hash and dataset fingerprint they are results of, how the intervals were drawn, every stream's scores
(`SCORE_FIELDS`: Avg H / Avg F with intervals, each setting and window with intervals, the repeats)
and a digest of every test task's reward. A sweep run in one process and the same sweep run as shards
and merged give the same `scores_seal`. Anyone can recompute it from the report's JSON alone:

    sha256(canonical({"config_hash": provenance.config_hash, "dataset_fingerprint": provenance.
    dataset_fingerprint, "bootstrap": bootstrap, "task_rewards_sha256": task_rewards_sha256,
    "streams": [{field: stream[field] for field in SCORE_FIELDS} for stream in streams]}))

with `canonical` as in `runner.stats.seal` (sorted keys, orjson's shortest float repr).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

import orjson

from runner.journal import TestOutcome
from runner.report.model import Report
from runner.stats.seal import canonical

__all__ = ["SCORE_FIELDS", "scores_section", "scores_seal", "task_rewards_digest"]

SCORE_FIELDS = ("model", "method", "complete", "test_done", "test_planned", "avg_h", "avg_h_ci", "avg_f", "avg_f_ci",
                "settings", "repeats")
"""The fields of a report stream the scores seal covers (never spend, tokens, latency or cache)."""


def task_rewards_digest(outcomes: Iterable[TestOutcome]) -> str:
    """sha256 over every finished test episode's (model, method, scenario, replica, task, repetition,
    reward), sorted: the same rewards give the same digest in any unit order."""
    rows = sorted([o.model, o.method, o.scenario, o.replica, o.task_id, o.repetition, o.reward] for o in outcomes)
    return hashlib.sha256(orjson.dumps(rows)).hexdigest()


def scores_section(report: Report) -> dict[str, Any]:
    streams = [asdict(stream) for stream in report.streams]
    return {"config_hash": report.provenance.config_hash,
            "dataset_fingerprint": report.provenance.dataset_fingerprint,
            "bootstrap": report.bootstrap, "task_rewards_sha256": report.task_rewards_sha256,
            "streams": [{name: stream[name] for name in SCORE_FIELDS} for stream in streams]}


def scores_seal(report: Report) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(canonical(scores_section(report))).hexdigest(), "fields": list(SCORE_FIELDS)}

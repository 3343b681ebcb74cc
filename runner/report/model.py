"""What a report says: its typed model, one place for every renderer and reader of it.

A report stream is (model, method) over all its scenarios, one leaderboard row; a `Setting` is one
scenario of it. Scores follow FORMAT.md "Scores and costs"; `Pair` is a [lo, hi] interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.audits.rates import StreamAudits
from runner.cost.batch_savings import BatchSpend
from runner.cost.cache_savings import CacheFigures
from runner.journal.call_tallies import ReplicaUse, RetryCounts
from runner.journal.sweep_record import SweepRecord
from runner.stats.exact import ONE_FAMILY, ONE_FAMILY_EACH
from runner.stats.noise import NoiseFloor
from runner.stats.repeats import RepeatSummary
from runner.stats.slices import SliceRow

__all__ = ["BATCH_OUTCOMES", "DOMAIN_ORDER", "ONE_FAMILY", "ONE_FAMILY_EACH", "PURPOSES", "SPECIFIED_DOMAINS",
           "BatchFigures", "BatchSpend", "Costs", "Pair", "StreamBatch",
           "MethodStream", "Provenance", "ReplicaUse", "Report", "RetryCounts", "Setting", "StreamKey", "StreamReport",
           "WindowScore", "percentile", "scenario_domain", "scenario_sort_key"]

PURPOSES = ("agent", "judge", "method")
SPECIFIED_DOMAINS = ("retail", "banking")
"""Avg F covers these domains only: pitch tasks are always hidden-dependent (FORMAT.md)."""
DOMAIN_ORDER = ("retail", "banking", "pitch")

Pair = list[float] | str | None
"""An interval [lo, hi]; None when there is nothing to resample; a note when the figure rests on too few
task families (ONE_FAMILY, ONE_FAMILY_EACH for an average, "2 tasks: too few for an interval") or every
task agrees on a value with no exact bound ("all 12 tasks agree"): a zero-wide "95% interval" would claim a
certainty the data does not have, so every format says so (`runner.stats.exact`). Where every task scored
100 or 0 (every pair tied) the interval is the exact one, not [100.0, 100.0]."""
StreamKey = tuple[str, str]


@dataclass(frozen=True)
class WindowScore:
    window: int
    hidden: float | None
    fully_specified: float | None
    n: int
    hidden_ci: Pair = None
    fully_specified_ci: Pair = None


@dataclass(frozen=True)
class Setting:
    """One scenario of a stream. Scores are None when no test task of that category is finished."""

    hidden: float | None
    fully_specified: float | None
    n: int
    planned: int
    complete: bool
    windows: list[WindowScore]
    hidden_ci: Pair = None
    fully_specified_ci: Pair = None


@dataclass(frozen=True)
class Costs:
    agent: float = 0.0
    judge: float = 0.0
    method: float = 0.0
    total: float = 0.0

    @classmethod
    def of(cls, by_purpose: Mapping[str, float]) -> Costs:
        # The total keeps any purpose a newer engine may add, so money never goes unreported.
        return cls(agent=by_purpose.get("agent", 0.0), judge=by_purpose.get("judge", 0.0),
                   method=by_purpose.get("method", 0.0), total=sum(by_purpose.values(), 0.0))

    def per(self, tasks: int) -> Costs | None:
        if tasks <= 0:
            return None
        return Costs(self.agent / tasks, self.judge / tasks, self.method / tasks, self.total / tasks)


@dataclass(frozen=True)
class StreamReport:
    model: str
    method: str
    complete: bool
    avg_h: float | None
    avg_f: float | None
    settings: dict[str, Setting]
    test_done: int
    test_planned: int
    episodes: int
    """Finished episodes, serving included: the denominator of every per-task figure."""
    input_tokens: int
    output_tokens: int
    """Of finished episodes (and of the method's own calls): what the per-task figures divide."""
    input_tokens_per_task: float | None
    output_tokens_per_task: float | None
    cost_usd: Costs
    """Everything the stream spent, unfinished attempts included."""
    cost_per_task_usd: Costs | None
    """The spend of finished episodes per finished episode."""
    latency_p50_s: float | None
    latency_p95_s: float | None
    avg_h_ci: Pair = None
    avg_f_ci: Pair = None
    repeats: RepeatSummary | None = None
    """With `--repeats K`: Avg H / Avg F per repeat, their spread, pass^k (scores above average the repeats)."""
    slices: dict[str, list[SliceRow]] = field(default_factory=dict)
    """Descriptive only (`runner.stats.slices`): by tool calls, turns, family, window, category."""
    unfinished_input_tokens: int = 0
    unfinished_output_tokens: int = 0
    unfinished_cost_usd: float = 0.0
    """Failed calls, and calls of episodes that failed or were interrupted: spent, shown apart, never
    divided by the finished episodes."""
    estimated_calls: int = 0
    """Calls whose tokens are an estimate (the provider sent no usage)."""
    end_reasons: dict[str, int] = field(default_factory=dict)
    """Finished episodes by how they ended: finished, turn_limit, context_length (the model's own
    limit, scored as the agent's), ..."""
    audits: StreamAudits | None = None
    """State audits and unsafe writes over the stream's retail and banking episodes (None: none audited)."""
    cache: CacheFigures = field(default_factory=CacheFigures)
    """Prompt caching over every call the stream sent: hit rate, writes, spend saved (`runner.cost.cache_savings`)."""
    stream_replicas: int = 1
    """Replicas of the stream (`--replicas K`) with finished test tasks (not endpoint pool replicas)."""
    noise: NoiseFloor | None = None
    """With two or more replicas: the spread between them, flip rates, the MDE (`runner.stats.noise`)."""
    noise_note: str = ""
    """With one replica: that the noise across serving streams is not measured."""


@dataclass(frozen=True)
class Provenance:
    """Where a run's numbers come from: enough to reproduce it or to tell two runs apart."""

    config: dict[str, Any]
    config_hash: str
    dataset_path: str
    dataset_fingerprint: str
    code_version: str
    models: dict[str, Any] = field(default_factory=dict)
    """Each model with the prices its calls were charged (`runner.report.provenance`)."""
    machine: dict[str, Any] | None = None
    """The machine the run started on (None for runs journaled before it was recorded)."""
    plan: dict[str, Any] | None = None
    """The locked plan the run followed (`run --plan`): its hashes and amendments."""
    methods: dict[str, Any] = field(default_factory=dict)
    """Each method as the run began: origin (registry, module, file, entry_point, adapter), target,
    options, block size, source sha256, distribution (`runner.config.method_provenance`); {} for older runs."""
    method_changes: list[dict[str, Any]] = field(default_factory=list)
    """Method source changes a resume accepted (`resume --accept-method-change`), oldest first."""
    report_code_version: str = ""
    """The code that computed this report (`runner.common.version`); `code_version` is the run's, as it stored it."""


@dataclass(frozen=True)
class MethodStream:
    stream_id: str
    contexts: int
    context_p50_s: float | None
    context_p95_s: float | None
    learns: int
    learn_p50_s: float | None
    learn_p95_s: float | None
    outcome: str
    """`ok`, `method_error` or `resolved` (it failed once, a resume got it through)."""
    failure: str = ""
    """The failure's one line, for a stream stopped by its method (or resolved)."""
    boundary: str = ""
    """What the method ran under: `in-process`, `process only`, or the worker's Landlock ruleset."""
    method_calls: int = 0
    """The method's own model calls (through `setup.client`), their tokens and their cost."""
    method_input_tokens: int = 0
    method_output_tokens: int = 0
    method_usd: float = 0.0


BATCH_OUTCOMES = ("succeeded", "resubmitted", "sent_live", "errored", "expired", "canceled", "pending")
"""A batched run's items by outcome: `succeeded`, `errored`, `expired`, `canceled` count each submission of a
request in that state; `resubmitted` the submissions in a resubmission batch; `sent_live` the requests that
failed in a batch and were then sent live; `pending` the items of batches not yet collected."""


@dataclass(frozen=True)
class StreamBatch:
    model: str
    method: str
    spend: BatchSpend


@dataclass(frozen=True)
class BatchFigures:
    """What a run that sent anything through a provider's batch API did with it (`--batch tests`)."""

    spend: BatchSpend
    """The whole run: live spend, batch spend, what batching saved (`runner.cost.batch_savings`)."""
    streams: list[StreamBatch]
    batches: int
    rounds: int
    """Batch rounds: the most batches one episode's requests went through. A round answers one turn of
    every waiting test episode (a test episode of T turns needs about T rounds, plus one for an item
    resubmitted); a round of more than `max_items` requests is split into several batches."""
    items: dict[str, int]
    """Items by outcome, every key of BATCH_OUTCOMES present."""
    outstanding: list[str] = field(default_factory=list)
    """'<api> <batch id or label> (<status>)' of each batch still 'submitting' or 'submitted': it may still
    be processed and billed."""
    turnaround_p50_s: float | None = None
    turnaround_max_s: float | None = None
    """Submitted to ended, over the batches that ended."""
    unpriced: list[str] = field(default_factory=list)
    """Batched models without a live price: their saving is not counted."""


@dataclass(frozen=True)
class Report:
    run_id: str
    status: str
    stop_reason: str
    journal: str
    created_at: float
    budget_usd: float | None
    cost_usd: Costs
    """Run-wide, including calls no unit or stream claims."""
    streams: list[StreamReport]
    provenance: Provenance
    bootstrap: dict[str, Any] = field(default_factory=dict)
    """How the intervals were drawn (draws, seed, level, what is resampled)."""
    replicas: list[ReplicaUse] = field(default_factory=list)
    """Calls per replica of each endpoint pool (none when no model is served by a pool)."""
    retries: list[RetryCounts] = field(default_factory=list)
    """Per stream that sent calls to a provider: calls, retried, retries, timeouts, failed for good."""
    cache: CacheFigures = field(default_factory=CacheFigures)
    """Prompt caching over every call the run sent, probes included."""
    task_rewards_sha256: str = ""
    """A digest of every finished test episode's reward (`runner.report.scores`): the scores seal covers it."""
    sweep: SweepRecord | None = None
    """For a journal merged from shards: the shards merged (caps, spend, status) and any missing."""
    method_streams: list[MethodStream] = field(default_factory=list)
    """Per stream whose method was timed or failed: its method's time and outcome (methods as guests)."""
    batch: BatchFigures | None = None
    """Only for a run that batched anything: live and batch spend apart, the saving, rounds, items."""


def scenario_domain(scenario: str) -> str:
    return scenario.split("_")[0]


def scenario_sort_key(scenario: str) -> tuple[int, str]:
    """FORMAT.md's order: retail, banking, pitch, then any other domain by name."""
    domain = scenario_domain(scenario)
    rank = DOMAIN_ORDER.index(domain) if domain in DOMAIN_ORDER else len(DOMAIN_ORDER)
    return rank, scenario


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)



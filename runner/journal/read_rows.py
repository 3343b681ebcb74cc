"""Typed rows the journal's named queries return: NamedTuples of each query's columns, one type per
concept read (an episode with its unit is `EpisodeDetail`, whoever reads it: the views, `verify`, the
exporters), and the filters and sums built over them (`EpisodeFilter`, `Spend`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "CacheUsage",
    "CallUsage",
    "EpisodeCalls",
    "EpisodeCost",
    "EpisodeDetail",
    "EpisodeEnd",
    "EpisodeFilter",
    "FinishedEpisode",
    "FinishedSpend",
    "MethodCalls",
    "PlannedSetting",
    "ReplicaCalls",
    "RunRow",
    "Spend",
    "StoredCheckpoint",
    "StoredEpisodeAudit",
    "StreamCalls",
    "StreamEpisodes",
    "StreamNames",
    "StreamOfRun",
    "StreamRetries",
    "TestOutcome",
    "TestScore",
    "UnitOfRun",
    "UnitProgress",
]


class RunRow(NamedTuple):
    run_id: str
    created_at: float
    updated_at: float
    status: str
    stop_reason: str
    config: str
    config_hash: str
    dataset_path: str
    dataset_fingerprint: str
    dataset_files: str
    code_version: str
    budget_usd: float | None
    pid: int


class StoredCheckpoint(NamedTuple):
    position: int
    """The timestamp of the last serving task the state has learned from."""
    state: bytes


class FinishedEpisode(NamedTuple):
    stream_id: str
    phase: str
    category: str
    reward: float


class UnitProgress(NamedTuple):
    total: int
    done: int


class StreamNames(NamedTuple):
    run_id: str
    model: str
    method: str


class StreamOfRun(NamedTuple):
    stream_id: str
    model: str
    method: str
    scenario: str
    replica: int = 0
    """The stream replica (`--replicas K`): one of a cell's K streams."""


class UnitOfRun(NamedTuple):
    """The units a run planned for one stream, phase and window."""

    model: str
    method: str
    scenario: str
    phase: str
    window: int
    units: int
    replica: int = 0
    """The stream replica (`--replicas K`); 0 for a run without replicas."""


class PlannedSetting(NamedTuple):
    model: str
    method: str
    scenario: str
    planned: int
    """Planned test units."""
    done: int


class TestScore(NamedTuple):
    model: str
    method: str
    scenario: str
    window: int
    category: str
    n: int
    total: float


class FinishedSpend(NamedTuple):
    tasks: int
    cost_usd: float


class EpisodeCost(NamedTuple):
    model: str
    method: str
    latency_s: float
    input_tokens: int
    output_tokens: int
    cost_usd: float


class StreamRetries(NamedTuple):
    """How one stream's (model and method) calls were retried."""

    model: str
    method: str
    calls: int
    """Calls sent (replayed answers not counted)."""
    retried_calls: int
    """Calls answered after at least one failed attempt."""
    retries: int
    """Attempts after a call's first, answered calls' and failed calls' alike."""
    timeouts: int
    """Failed attempts that timed out: no byte for the stall time, an attempt or a call past its time."""
    failed_calls: int
    """Calls that failed for good (their episode re-run or stopped)."""


class ReplicaCalls(NamedTuple):
    """Calls of one model that one replica of its endpoint pool answered or failed last."""

    model: str
    replica: str
    answered: int
    failed: int
    retried: int
    """Answered after more than one attempt (a failover between replicas is no extra attempt)."""
    last_answered_at: float | None
    """Epoch seconds of its latest answered call (when it was journaled)."""


class CallUsage(NamedTuple):
    """Model calls of one (model, method, purpose, finished); model and method are None for a call no
    unit or stream of the run claims."""

    model: str | None
    method: str | None
    purpose: str
    finished: bool
    """Answered calls of finished episodes (and of no episode: a method's update); False for failed
    calls and the calls of episodes that failed or were interrupted, whose spend is shown apart."""
    input_tokens: int
    output_tokens: int
    cost_usd: float
    estimated_calls: int
    """Calls whose tokens were estimated (the provider sent no usage)."""


class CacheUsage(NamedTuple):
    """Prompt tokens of the calls one model made for one stream (stream model and method None: a call no
    unit or stream claims, such as a probe): what prompt caching read, wrote and saved is priced from it."""

    stream_model: str | None
    method: str | None
    model: str
    """The model called (a judge's model may differ from the stream's): its price applies."""
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cache_write_1h_tokens: int = 0
    """The part of the writes made to Anthropic's 1-hour cache (billed at their own rate)."""


class StreamCalls(NamedTuple):
    """What one stream's calls to one model cost and sent, over the whole run (a resumed process
    starts its dashboard rows from these)."""

    stream_id: str
    model: str
    cost_usd: float
    """Every call of the stream, replayed answers (free) included."""
    input_tokens: int
    """The tokens fields: calls sent only (a replayed answer sent nothing)."""
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cache_write_1h_tokens: int

    def usage(self) -> CacheUsage:
        return CacheUsage(None, None, self.model, self.input_tokens, self.cached_input_tokens,
                          self.cache_write_tokens, self.output_tokens, self.cache_write_1h_tokens)


class EpisodeCalls(NamedTuple):
    """The calls one finished episode sent to one model (called model None: no call was journaled, as
    for the offline model; the tokens are then the episode's own): a projection's unit of measure."""

    unit_id: str
    model: str
    method: str
    scenario: str
    phase: str
    turns: int
    called: str | None
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cache_write_1h_tokens: int = 0


class MethodCalls(NamedTuple):
    """A learning method's own calls of one stream (its updates), to one model."""

    model: str
    method: str
    scenario: str
    called: str
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cache_write_1h_tokens: int = 0


class EpisodeEnd(NamedTuple):
    """How one finished episode ended, in plan order (for reports' end-reason counts and benchmarks)."""

    model: str
    method: str
    scenario: str
    phase: str
    end_reason: str
    turns: int
    tool_calls: int
    reward: float


class TestOutcome(NamedTuple):
    """One finished test episode with its task's family: the input of intervals, compare and gates."""

    model: str
    method: str
    scenario: str
    task_id: str
    family: str
    category: str
    window: int
    repetition: int
    reward: float
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    replica: int = 0
    """The stream replica (`--replicas K`) that ran it."""



class StreamEpisodes(NamedTuple):
    stream_id: str
    phase: str
    episodes: int
    turns: int
    last_finished_at: float


@dataclass(frozen=True)
class Spend:
    """What a run spent. The one place the rule lives: its model calls by purpose, with the episodes'
    own agent cost standing in when the run journaled no agent calls (scripted or older runs)."""

    calls: Mapping[str, float] = field(default_factory=dict)
    """Journaled model calls, by purpose."""
    episodes_agent_usd: float = 0.0

    @property
    def agent_calls_journaled(self) -> bool:
        return "agent" in self.calls

    @property
    def by_purpose(self) -> dict[str, float]:
        if self.agent_calls_journaled:
            return dict(self.calls)
        return {**self.calls, "agent": self.episodes_agent_usd}

    @property
    def total(self) -> float:
        return sum(self.by_purpose.values(), 0.0)


@dataclass(frozen=True)
class EpisodeFilter:
    """Which finished episodes of a run to read; None (or False) leaves a field unconstrained."""

    unit_id: str | None = None
    model: str | None = None
    method: str | None = None
    scenario: str | None = None
    window: int | None = None
    phase: str | None = None
    failed: bool = False
    """Only episodes short of the full score (reward < 1)."""
    replica: int | None = None
    """One stream replica (`--replicas K`)."""

    def params(self) -> tuple[object, ...]:
        """The filter's parameters in the order of the queries' `_EPISODE_WHERE` clause."""
        pairs = (self.unit_id, self.model, self.method, self.scenario, self.window, self.phase, self.replica)
        return (*(value for field_value in pairs for value in (field_value, field_value)), int(self.failed))


class EpisodeDetail(NamedTuple):
    """One finished episode with its unit: everything a transcript shows and `verify` re-grades;
    `record` and `grade_details` are JSON bytes."""

    unit_id: str
    stream_id: str
    model: str
    method: str
    scenario: str
    phase: str
    window: int
    task_id: str
    category: str
    reward: float
    judge: str
    grade_details: bytes
    turns: int
    tool_calls: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    end_reason: str
    record: bytes
    """The episode record as JSON bytes (`simulators.record.EpisodeRecord.from_json` reads it)."""
    finished_at: float
    replica: int = 0
    """The stream replica (`--replicas K`) that ran it."""


class StoredEpisodeAudit(NamedTuple):
    """An episode's state audits with where it belongs (reports, gates)."""

    model: str
    method: str
    scenario: str
    phase: str
    unit_id: str
    state_match: bool | None
    state_unchanged: bool | None
    writes_proposed: int
    writes_executed: int
    writes_changing: int
    escalated: bool

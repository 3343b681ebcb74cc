"""Typed rows the journal writes: each a NamedTuple whose fields are its table's columns in order, so a
row is its own statement parameters (no copying on the model-call path). `CheckpointKey` names a
stream's checkpoints instead of string labels. The rows its queries return are in
runner.journal.read_rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "AuditCaseRow",
    "AuditRow",
    "CheckpointKey",
    "EpisodeAuditRow",
    "EpisodeRow",
    "ModelCallRow",
    "NewRun",
    "UnitRow",
]


class EpisodeAuditRow(NamedTuple):
    """One episode's state audits (`simulators.audit`); a None check is missing, never a pass."""

    run_id: str
    unit_id: str
    stream_id: str
    state_match: bool | None
    state_unchanged: bool | None
    writes_proposed: int
    writes_executed: int
    writes_changing: int
    escalated: bool
    details: bytes


class AuditRow(NamedTuple):
    """An audit replay of a run (faults, metamorphic): its id names run, kind, spec and code version."""

    audit_id: str
    run_id: str
    kind: str
    spec: str
    code_version: str
    created_at: float
    status: str


class AuditCaseRow(NamedTuple):
    """One audited case's verdict and what it rests on (JSON)."""

    audit_id: str
    case_id: str
    verdict: str
    details: bytes
    finished_at: float


class NewRun(NamedTuple):
    """A run as `start_sweep` journals it (status 'running'); config and dataset_files are JSON text."""

    run_id: str
    created_at: float
    updated_at: float
    config: str
    config_hash: str
    dataset_path: str
    dataset_fingerprint: str
    dataset_files: str
    code_version: str
    budget_usd: float | None
    pid: int


class UnitRow(NamedTuple):
    """One planned unit of work (an episode to run), status 'pending' until its episode is journaled."""

    run_id: str
    unit_id: str
    stream_id: str
    model: str
    method: str
    scenario: str
    phase: str
    window: int
    seq: int
    task_id: str
    position: int
    category: str
    family: str
    """The evaluator's family (empty when the dataset has none): what intervals resample."""
    repetition: int
    """0 for a task's first (or only) run; 1..K-1 for the repeats of `--repeats K`."""
    replica: int = 0
    """The stream's replica, 0..K-1 of `--replicas K` (not an endpoint pool's replica)."""


class EpisodeRow(NamedTuple):
    """A finished episode; `record` and `grade_details` are JSON bytes."""

    run_id: str
    unit_id: str
    stream_id: str
    reward: float
    judge: str
    category: str
    turns: int
    tool_calls: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    end_reason: str
    record: bytes
    grade_details: bytes
    finished_at: float


class ModelCallRow(NamedTuple):
    """One model call: paid, replayed from the cache (cost 0) or failed (what it was billed for)."""

    run_id: str
    unit_id: str
    stream_id: str
    purpose: str
    model: str
    request_hash: str
    status: str
    attempts: int
    from_cache: bool
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    created_at: float
    error: str
    usage_estimated: bool = False
    """The provider sent no usage; the tokens are estimated from the bytes sent and received."""
    replica: str = ""
    """The replica of an endpoint pool that answered (or was tried last, for a failed call); empty for one
    endpoint and for cached answers."""
    cache_write_1h_tokens: int = 0
    """The part of `cache_write_tokens` written to Anthropic's 1-hour cache."""
    cache_ttl: str = ""
    """The prompt-cache TTL the request asked for ('5m', '1h'; '' when it marked nothing)."""
    retried: str = ""
    """The failure class of each failed attempt, comma-separated in order ('timeout,server error'); a
    failed call's last attempt included. Empty: answered at the first attempt (or replayed)."""
    route: str = "live"
    """'live', or 'batch' for a call answered through the provider's batch API (priced at its batch tier)."""


@dataclass(frozen=True)
class CheckpointKey:
    """Which checkpoint of a stream: its latest (what a resume restores), or the state at the end of one
    window's serving (what that window's test set runs against)."""

    window: int | None = None

    @classmethod
    def latest(cls) -> CheckpointKey:
        return cls()

    @classmethod
    def window_end(cls, window: int) -> CheckpointKey:
        return cls(window)

    @property
    def label(self) -> str:
        """The stored label (part of the schema: 'latest' or 'window:N')."""
        return "latest" if self.window is None else f"window:{self.window}"

    @classmethod
    def from_label(cls, label: str) -> CheckpointKey:
        """The key a stored label names (the inverse of `label`)."""
        return cls() if label == "latest" else cls(int(label.removeprefix("window:")))

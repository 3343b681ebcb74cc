"""One episode as a person reads it: the task, each turn, the finish, the grade, what it cost.

A `Transcript` is built from one journaled episode (its unit, its row, its stored record) and rendered
for a terminal (`show`, through rich, in `runner.views.show`), for the HTML report, and as plain data
(`show --json`, `export --format jsonl`). An episode "failed" when it did not earn the full score:
binary domains score 0 or 100, a pitch scores anywhere between.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from simulators.protocol import JSON
from simulators.record import EpisodeRecord, score_line

__all__ = ["FailedSetting", "SettingKey", "Transcript", "failed", "json_text", "transcript_data"]


@dataclass(frozen=True)
class Transcript:
    run_id: str
    unit_id: str
    model: str
    method: str
    scenario: str
    phase: str
    window: int
    task_id: str
    category: str
    reward: float
    judge: str
    grade_details: JSON
    turns: int
    tool_calls: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    end_reason: str
    record: EpisodeRecord

    @property
    def stream(self) -> str:
        return f"{self.model}/{self.method}"

    @property
    def score_line(self) -> str:
        return score_line(self.reward)

    @property
    def finish(self) -> str:
        return "" if self.record.finish_arguments is None else json_text(self.record.finish_arguments)


SettingKey = tuple[str, str, str]
"""(model, method, scenario)"""


@dataclass(frozen=True)
class FailedSetting:
    """A setting's failed test episodes: the first few in full, and how many there are in all."""

    shown: Sequence[Transcript]
    total: int


def failed(transcript: Transcript) -> bool:
    return transcript.reward < 1.0


def transcript_data(transcript: Transcript) -> dict[str, Any]:
    """Plain data for JSON: every field, the record as the journal stored it."""
    return asdict(transcript)


def json_text(value: object) -> str:
    """Indented JSON with sorted keys, so a transcript reads the same every time."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()

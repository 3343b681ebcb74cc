"""One episode as a person reads it: the task, each turn, the finish, the grade, what it cost.

A `Transcript` is one journaled episode (the journal's `EpisodeDetail`, its grade and record decoded), rendered
for a terminal (`show`, through rich, in `runner.views.show`), for the HTML report, and as plain data
(`show --json`, `export --format jsonl`). An episode "failed" when it did not earn the full score:
binary domains score 0 or 100, a pitch scores anywhere between.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from runner.journal import EpisodeDetail
from simulators.protocol import JSON
from simulators.record import EpisodeRecord, score_line

__all__ = ["FailedSetting", "SettingKey", "Transcript", "failed", "json_text", "transcript_data"]


# The episode's fields that its plain data carries, in order (its unit and row, minus the journal's own
# bookkeeping: the stream id and when it finished).
_DATA_FIELDS = tuple(name for name in EpisodeDetail._fields
                     if name not in ("stream_id", "finished_at", "grade_details", "record"))


@dataclass(frozen=True)
class Transcript:
    """One journaled episode (`row`, the journal's one read type of an episode) with its stored grade
    and record decoded."""

    run_id: str
    row: EpisodeDetail
    grade_details: JSON
    record: EpisodeRecord

    @classmethod
    def of(cls, run_id: str, row: EpisodeDetail) -> Transcript:
        return cls(run_id=run_id, row=row, grade_details=orjson.loads(row.grade_details),
                   record=EpisodeRecord.from_json(orjson.loads(row.record)))

    @property
    def stream(self) -> str:
        return f"{self.row.model}/{self.row.method}"

    @property
    def score_line(self) -> str:
        return score_line(self.row.reward)

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
    return transcript.row.reward < 1.0


def transcript_data(transcript: Transcript) -> dict[str, Any]:
    """Plain data for JSON: the episode's fields, its grade, and the record as the journal stored it."""
    row = transcript.row
    return {"run_id": transcript.run_id, **{name: getattr(row, name) for name in _DATA_FIELDS},
            "grade_details": transcript.grade_details, "record": asdict(transcript.record)}


def json_text(value: object) -> str:
    """Indented JSON with sorted keys, so a transcript reads the same every time."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()

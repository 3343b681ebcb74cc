"""lessons: Reflexion / ReasoningBank-style distilled lessons.

One model call per serving episode (a block's calls run concurrently, each against the store as it
was before the block, and are merged in stream order) distils at most three lessons, each a title,
when it applies and what to do. The method, not the model, labels a lesson by its episode's outcome
(success when the score is at least 50) and stamps its stream position. A new lesson that
near-duplicates a stored one replaces it, so a restated lesson moves to the present. The store
keeps the newest 200 lessons (the oldest is evicted first).

The context shows up to 6 lessons relevant to the task (BM25 of the lesson text against the
instruction without its timestamp line; ties: newer first) and then the 3 most recent failure
lessons not already shown, because failures are where a changed policy shows first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from methods.base import MethodSetup, MethodSpec
from methods.bm25 import Bm25Index
from methods.llm_json import as_text, ask_json, gather, items_of
from methods.text import clip, near_duplicate, strip_timestamp, tokenize
from simulators.model_api import ModelClient
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["LESSONS", "Lesson", "LessonsMethod", "SYSTEM"]

SYSTEM = (
    "You review one finished episode of a tool-using agent and distil lessons for its future episodes "
    "in the same environment. The environment's real policy may differ from its documents and may "
    "change over time; the score is the only feedback the agent gets.\n"
    "Write at most 3 lessons, each specific and actionable: name the tools, conditions, thresholds or "
    "customer traits involved. From a low score, say what to do differently; from a high score, what "
    "worked. Do not restate the documents unless the episode confirms or refutes them.\n"
    'Reply with JSON only: {"lessons": [{"title": "...", "when": "when it applies", "do": "what to do"}]}. '
    'If the episode teaches nothing, reply {"lessons": []}.'
)
HEADER = ("## Lessons from your past episodes\n"
          "Distilled from YOUR OWN earlier episodes in this environment; t is the stream position of the "
          "episode a lesson came from. The environment may change over time: when lessons conflict, "
          "trust the later one.")
SUCCESS_SCORE = 50
MAX_PER_EPISODE = 3
RECORD_CHARS = 60_000


@dataclass(frozen=True)
class Lesson:
    id: int
    title: str
    when: str
    do: str
    outcome: str
    """"success" or "failure", from the episode's score."""
    position: int
    score: int

    def text(self) -> str:
        return f"{self.title} {self.when} {self.do}"

    def line(self) -> str:
        return f"- [t={self.position}, from a {self.outcome}] {self.title}. When: {self.when}. Do: {self.do}"


class LessonsMethod:
    def __init__(self, client: ModelClient, domain: str, cap: int = 200, relevant: int = 6,
                 recent_failures: int = 3) -> None:
        self._client = client
        self._domain = domain
        self.cap, self.relevant, self.recent_failures = cap, relevant, recent_failures
        self._lessons: list[Lesson] = []
        self._next_id = 1
        self._index: Bm25Index | None = None
        """Over `_lessons` in order; rebuilt lazily after any change."""

    def context(self, task: TaskView) -> str:
        shown = self._relevant(task.instruction)
        failures = [le for le in reversed(self._lessons) if le.outcome == "failure" and le not in shown]
        parts = [HEADER]
        if shown:
            parts += ["### Relevant to this task", *(le.line() for le in shown)]
        if failures[: self.recent_failures]:
            parts += ["### Recent failures", *(le.line() for le in failures[: self.recent_failures])]
        return "\n".join(parts) if len(parts) > 1 else ""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        replies = await gather(self._distil, records)
        for record, reply in zip(records, replies, strict=True):
            for fields in reply[:MAX_PER_EPISODE]:
                self._store(record, fields)
        self._lessons = self._lessons[-self.cap:]
        self._index = None

    def state(self) -> JSON:
        return {"next_id": self._next_id, "lessons": [asdict(le) for le in self._lessons]}

    def load(self, state: JSON) -> None:
        self._next_id = int(state["next_id"])
        self._lessons = [Lesson(**le) for le in state["lessons"]]
        self._index = None

    # ----------------------------------------------------------------------------------------- inner

    async def _distil(self, record: EpisodeRecord) -> list[Mapping[str, JSON]]:
        outcome = _outcome(record.score)
        user = (f"Episode at stream position {record.position}, score {record.score}/100 (a {outcome}):\n\n"
                f"{clip(record.render(), RECORD_CHARS)}")
        reply = await ask_json(self._client, system=SYSTEM, user=user, domain=self._domain)
        return items_of(reply, "lessons")

    def _store(self, record: EpisodeRecord, fields: Mapping[str, JSON]) -> None:
        title, when, do = as_text(fields.get("title"), 160), as_text(fields.get("when")), as_text(fields.get("do"))
        if not title or not do:
            return
        lesson = Lesson(self._next_id, title, when, do, _outcome(record.score), record.position, record.score)
        self._next_id += 1
        self._lessons = [le for le in self._lessons if not near_duplicate(le.text(), lesson.text())]
        self._lessons.append(lesson)

    def _relevant(self, instruction: str) -> list[Lesson]:
        if self._index is None:
            self._index = Bm25Index()
            for lesson in self._lessons:
                self._index.add(tokenize(lesson.text()))
        scores = self._index.scores(tokenize(strip_timestamp(instruction)))
        # Best first; ties go to the newer lesson (higher index in the store).
        ranked = sorted((i for i, s in scores.items() if s > 0), key=lambda i: (-scores[i], -i))
        return [self._lessons[i] for i in ranked[: self.relevant]]


def _outcome(score: int) -> str:
    return "success" if score >= SUCCESS_SCORE else "failure"


def describe_lessons(state: JSON) -> str:
    """Every lesson kept, oldest first, as the agent would read it."""
    lessons = [Lesson(**le) for le in state.get("lessons", [])]
    return "\n".join([f"{len(lessons)} lesson(s) kept, oldest first:", *(le.line() for le in lessons)]) \
        if lessons else ""


def _build(setup: MethodSetup) -> LessonsMethod:
    if setup.client is None:
        raise ValueError("the lessons method needs a model client")
    return LessonsMethod(setup.client, setup.domain)


LESSONS = MethodSpec(name="lessons", summary="One model call per episode distils up to 3 lessons; shows relevant "
                     "ones and recent failures.", uses_model=True, build=_build,
                     describe=describe_lessons)

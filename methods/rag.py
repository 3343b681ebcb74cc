"""rag: the reference retrieval baseline, and a recency-weighted variant.

After each block every record joins the store, as the reference's RAG stores it: in the reference's
record text (`methods.slb.record`: no observation after an accepted finish, a turn without a call as
`NONE [invalid: (no_action)]` and the corrective message it got as the next step's `received:`,
arguments as re-encoded JSON). For a task, the 8 past records most similar to its
instruction are shown with their score and stream position, best first. Similarity is Okapi BM25
(k1 = 1.5, b = 0.75, `methods.bm25`) over lowercased `[a-z0-9]+` tokens of the instruction with its
`Current timestamp: t` line removed; the query is the task's instruction processed the same way.
Only records scoring above zero are shown. Ties are broken by stream order, older first (the
reference's stable sort over a store kept in stream order). A record is capped at 100,000
characters; the cap is applied when it is stored, which shows the same text and keeps checkpoints
small. No model calls.

`rag_recency` multiplies each score by 0.5 ** (age / half_life), age being the distance in stream
positions from the newest stored record, so that after a policy change recent records outrank
equally similar older ones.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass

from methods.base import MethodSetup, MethodSpec
from methods.bm25 import Bm25Index
from methods.slb.record import reference_record
from methods.text import strip_timestamp, tokenize
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["RAG", "RAG_RECENCY", "RagMethod"]

HEADER = ("# Past cases\n"
          "These are complete records of YOUR OWN earlier episodes in this environment, retrieved because "
          "their instructions are similar to the current one. Each carries the score it received. The "
          "environment may change over time; each record's 'Current timestamp' line gives the stream "
          "position at which it was observed.\n")
TRUNCATED = "\n  (record truncated)"


@dataclass(frozen=True)
class Case:
    position: int
    score: str
    """reward x 100 as the reference's score line writes it (`73.5` for a pitch, not rounded); text, so
    the state stays free of floats (an old checkpoint's whole number reads the same)."""
    instruction: str
    record: str
    """The rendered record, already cut to the character cap."""
    truncated: bool


class RagMethod:
    def __init__(self, top_k: int = 8, char_cap: int = 100_000, half_life: int | None = None,
                 tool_names: Collection[str] | None = None) -> None:
        self.top_k = top_k
        self.char_cap = char_cap
        self.half_life = half_life
        """None: plain BM25 (the reference). Otherwise the recency half-life in stream positions."""
        self.tool_names = tool_names
        """The scenario's tools, which tell a call to no tool apart in the record; None: every name is one."""
        self._cases: list[Case] = []
        self._index = Bm25Index()

    def context(self, task: TaskView) -> str:
        cases = self.retrieve(task.instruction)
        if not cases:
            return ""
        parts = [HEADER]
        for case in cases:
            text = case.record + (TRUNCATED if case.truncated else "")
            parts.append(f"## Case observed at stream position {case.position} — Score: {case.score}/100.\n{text}\n")
        return "\n".join(parts)

    def retrieve(self, instruction: str) -> list[Case]:
        scores = self._index.scores(tokenize(strip_timestamp(instruction)))
        weighted = [(self._weight(i, s), i) for i, s in scores.items() if s > 0]
        # Best first; equal scores in store order, which is stream order (older first).
        weighted.sort(key=lambda pair: (-pair[0], pair[1]))
        return [self._cases[i] for _, i in weighted[: self.top_k]]

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        for record in records:
            text = reference_record(record, self.tool_names)
            self._add(Case(record.position, f"{record.reward * 100:g}", record.task.instruction, text[: self.char_cap],
                           len(text) > self.char_cap))

    def state(self) -> JSON:
        return {"cases": [asdict(c) for c in self._cases]}

    def load(self, state: JSON) -> None:
        self._cases, self._index = [], Bm25Index()
        for c in state["cases"]:
            self._add(Case(int(c["position"]), str(c["score"]), str(c["instruction"]), str(c["record"]),
                           bool(c["truncated"])))

    def _add(self, case: Case) -> None:
        self._cases.append(case)
        self._index.add(tokenize(strip_timestamp(case.instruction)))

    def _weight(self, index: int, score: float) -> float:
        if self.half_life is None:
            return score
        age = self._cases[-1].position - self._cases[index].position
        decay: float = 0.5 ** (max(0, age) / self.half_life)
        return score * decay


def describe_rag(state: JSON) -> str:
    """The past cases a task's instruction is matched against: position, score and the request."""
    cases = state.get("cases", [])
    if not cases:
        return ""
    lines = [f"{len(cases)} past case(s) to retrieve from (the top matches of each task's instruction go in "
             "its prompt):"]
    for case in cases:
        request = strip_timestamp(str(case["instruction"])).strip().splitlines()
        lines.append(f"- t={case['position']} Score: {case['score']}/100. {request[0] if request else ''}")
    return "\n".join(lines)


def _build_plain(setup: MethodSetup) -> RagMethod:
    return RagMethod(tool_names=_tools(setup))


def _build_recency(setup: MethodSetup) -> RagMethod:
    return RagMethod(half_life=150, tool_names=_tools(setup))


def _tools(setup: MethodSetup) -> frozenset[str] | None:
    if setup.public is None:
        return None
    return frozenset(str(tool["function"]["name"]) for tool in setup.public.tools)


RAG = MethodSpec(name="rag", summary="BM25 top 8 past records by instruction, with score and position (reference).",
                 uses_model=False, build=_build_plain, describe=describe_rag)
RAG_RECENCY = MethodSpec(name="rag_recency", summary="rag with BM25 scores halved every 150 stream positions of age.",
                         uses_model=False, build=_build_recency, describe=describe_rag)

"""icl_full: the whole serving history in the prompt, oldest to newest, under a token cap.

No model calls. Tokens are estimated as characters / 4. When the history outgrows the cap:
1. the oldest records are shortened to instruction, actions and score, oldest first, but never the
   newest records whose full text fits in `full_percent` of the cap (recent detail is kept);
2. if everything shortenable is short and the history is still over the cap, the oldest records
   are dropped.
Both steps only ever move forward as records arrive (more records, more pressure), so the method
stores the result of applying them after each `learn` and the state stays bounded by the cap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from methods.base import MethodSetup, MethodSpec
from methods.text import estimate_tokens, short_record
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["ICL_FULL", "IclFullMethod"]

HEADER = ("## Your past episodes, oldest first\n"
          "These are records of YOUR OWN earlier episodes in this environment, each with the score it "
          "received. The environment may change over time: later episodes reflect the current policy "
          "better. Older episodes may be shortened to their instruction, actions and score.")


@dataclass(frozen=True)
class Entry:
    position: int
    text: str
    short: bool
    """True once the record has been reduced to instruction, actions and score."""


class IclFullMethod:
    def __init__(self, cap_tokens: int = 100_000, full_percent: int = 50) -> None:
        self.cap_tokens = cap_tokens
        self.full_percent = full_percent
        self._entries: list[Entry] = []
        self._shorts: dict[int, str] = {}
        """Short forms of entries still full, by position: kept only in memory (see `_fit`)."""

    def context(self, task: TaskView) -> str:
        if not self._entries:
            return ""
        return "\n\n".join([HEADER, *(_block(e) for e in self._entries)])

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        for record in records:
            self._entries.append(Entry(record.position, record.render(), short=False))
            self._shorts[record.position] = short_record(record)
        self._fit()

    def state(self) -> JSON:
        # Built by hand: dataclasses.asdict deep-copies recursively and showed up as the largest cost
        # of a sweep (it runs after every serving episode, over the whole history).
        entries = [{"position": e.position, "text": e.text, "short": e.short} for e in self._entries]
        return {"entries": entries, "shorts": self._short_forms()}

    def load(self, state: JSON) -> None:
        self._entries = [Entry(int(e["position"]), str(e["text"]), bool(e["short"])) for e in state["entries"]]
        self._shorts = {int(k): str(v) for k, v in state["shorts"].items()}

    # ----------------------------------------------------------------------------------------- cap

    def _fit(self) -> None:
        costs = [estimate_tokens(_block(e)) for e in self._entries]
        protected = self._protected_from(costs)
        for i in range(protected):
            if sum(costs) <= self.cap_tokens:
                break
            entry = self._entries[i]
            if not entry.short:
                self._entries[i] = replace(entry, text=self._shorts[entry.position], short=True)
                costs[i] = estimate_tokens(_block(self._entries[i]))
        while self._entries and sum(costs) > self.cap_tokens:
            self._entries.pop(0)
            costs.pop(0)
        live = {e.position for e in self._entries if not e.short}
        self._shorts = {p: s for p, s in self._shorts.items() if p in live}

    def _protected_from(self, costs: list[int]) -> int:
        """Index of the first entry of the newest run whose full text fits in the protected share."""
        budget = self.cap_tokens * self.full_percent // 100
        start = len(costs)
        while start > 0 and not self._entries[start - 1].short and costs[start - 1] <= budget:
            budget -= costs[start - 1]
            start -= 1
        return start

    def _short_forms(self) -> dict[str, str]:
        return {str(p): self._shorts[p] for p in sorted(self._shorts)}


def _block(entry: Entry) -> str:
    kind = "shortened" if entry.short else "full record"
    return f"### Episode at stream position {entry.position} ({kind})\n{entry.text}"


def describe_icl_full(state: JSON) -> str:
    """One line per past episode in the prompt: its position, whole or shortened, and its score line."""
    entries = [Entry(int(e["position"]), str(e["text"]), bool(e["short"])) for e in state.get("entries", [])]
    if not entries:
        return ""
    short = sum(e.short for e in entries)
    lines = [f"{len(entries)} past episode(s) in the prompt, oldest first ({short} shortened to instruction, "
             "actions and score):"]
    lines += [f"- t={e.position} {'shortened' if e.short else 'whole'}: {e.text.rstrip().splitlines()[-1]}"
              for e in entries]
    return "\n".join(lines)


def _build(setup: MethodSetup) -> IclFullMethod:
    return IclFullMethod()


ICL_FULL = MethodSpec(name="icl_full", summary="Every past serving record in the prompt, oldest shortened then dropped "
                      "past a 100k-token cap.", uses_model=False, build=_build,
                      describe=describe_icl_full)

"""A method of the reference's interface shape, written after the reference's RAG method.

It keeps to that interface only (`setup(bundle)`, `context(task, phase, window)`, `update(results)`,
`learns`, `block_size`, `config()`), imports nothing of shiftbench's retrieval and nothing of the
reference package: every case it stores is the `EpisodeResult.record` text the adapter hands it. Its
BM25 is written out here (k1 1.5, b 0.75, `[a-z0-9]+` tokens of the instruction without its timestamp
line, the top 8 with a positive score, ties older first); only the header text is shiftbench's own, so
that a context through the adapter can be compared byte for byte with shiftbench's `rag`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from methods.rag import HEADER

_TOKEN = re.compile(r"[a-z0-9]+")
_STAMP = "Current timestamp: "


def _words(text: str) -> list[str]:
    if text.startswith(_STAMP):
        text = text.split("\n\n", 1)[-1]
    return _TOKEN.findall(text.lower())


class RAG:
    name = "rag"
    learns = True

    def __init__(self, top_k: int = 8, block_size: int = 12, char_cap: int = 100_000) -> None:
        self.top_k = top_k
        self.block_size = block_size
        self.char_cap = char_cap
        self.cases: list[dict[str, Any]] = []
        self.docs: list[list[str]] = []

    def setup(self, bundle: dict[str, Any]) -> None:
        self.bundle = bundle

    def context(self, task: Any, phase: str, window: int) -> str:
        best = self._best(_words(task.instruction))
        if not best:
            return ""
        parts = [HEADER]
        for case in best:
            text = case["record"]
            if len(text) > self.char_cap:
                text = text[: self.char_cap] + "\n  (record truncated)"
            parts.append(f"## Case observed at stream position {case['timestamp']} — "
                         f"Score: {case['reward'] * 100:g}/100.\n{text}\n")
        return "\n".join(parts)

    def update(self, results: list[Any]) -> None:
        for result in results:
            self.cases.append({"timestamp": result.timestamp, "reward": result.reward, "record": result.record})
            self.docs.append(_words(result.instruction))

    def config(self) -> dict[str, Any]:
        return {"method": self.name, "top_k": self.top_k, "block_size": self.block_size}

    def _best(self, query: list[str]) -> list[dict[str, Any]]:
        if not self.docs:
            return []
        count = len(self.docs)
        mean_length = sum(len(d) for d in self.docs) / count
        frequency: dict[str, int] = {}
        for doc in self.docs:
            for word in set(doc):
                frequency[word] = frequency.get(word, 0) + 1
        scored = []
        for index, doc in enumerate(self.docs):
            score = 0.0
            for word in query:
                hits = doc.count(word)
                if hits:
                    idf = math.log(1 + (count - frequency[word] + 0.5) / (frequency[word] + 0.5))
                    score += idf * hits * 2.5 / (hits + 1.5 * (0.25 + 0.75 * len(doc) / mean_length))
            scored.append((score, index))
        scored.sort(key=lambda pair: -pair[0])  # stable: equal scores stay in stream order
        return [self.cases[i] for s, i in scored[: self.top_k] if s > 0]

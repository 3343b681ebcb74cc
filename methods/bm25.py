"""Okapi BM25 over token lists, with an incremental index.

    score(q, d) = sum over query tokens t (repeats counted) present in d of
                  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

The idf is the "plus one" variant the reference retriever uses: always positive, so a token that
appears in most documents still counts a little instead of counting against a match. The index is
derived data: methods rebuild it from their state and never store it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

__all__ = ["Bm25Index"]


class Bm25Index:
    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._lengths: list[int] = []
        self._postings: dict[str, dict[int, int]] = {}
        """token -> {document index: term frequency}; a query touches only documents it shares a token with."""

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, tokens: Sequence[str]) -> int:
        """Index one document; returns its index (documents are numbered in the order added)."""
        index = len(self._lengths)
        self._lengths.append(len(tokens))
        for token, count in Counter(tokens).items():
            self._postings.setdefault(token, {})[index] = count
        return index

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """Document index -> BM25 score, for every document sharing at least one token with the query."""
        n = len(self._lengths)
        if n == 0:
            return {}
        average = sum(self._lengths) / n
        totals: dict[int, float] = {}
        # Query tokens in query order, repeats included: sums then run in the same order every time.
        for token in query:
            posting = self._postings.get(token)
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for index, tf in posting.items():
                norm = self.k1 * (1 - self.b + self.b * self._lengths[index] / average)
                totals[index] = totals.get(index, 0.0) + idf * tf * (self.k1 + 1) / (tf + norm)
        return totals

"""rag: BM25 against a hand-computed example, what is shown, the caps, tie-breaking, recency."""

from __future__ import annotations

import math

import pytest

from methods.base import MethodSetup
from methods.bm25 import Bm25Index
from methods.rag import RAG, RAG_RECENCY, RagMethod
from methods.slb.record import reference_record
from methods.text import tokenize
from tests.methods.fakes import record, view

# Three documents, 10 tokens in all: N = 3, avgdl = 10 / 3.
DOCS = ["refund the order", "cancel the order now", "refund refund please"]
K1, B = 1.5, 0.75


def hand_scores() -> list[float]:
    """BM25 of the query "refund cancel" worked out term by term.

    idf(refund): df = 2 -> ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6)
    idf(cancel): df = 1 -> ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(8/3)
    length norm K = k1 * (1 - b + b * |d| / avgdl): |d| = 3 -> 1.5 * (0.25 + 0.675) = 1.3875
                                                    |d| = 4 -> 1.5 * (0.25 + 0.9)   = 1.725
    doc 0: refund tf 1          -> ln(1.6)   * 1 * 2.5 / (1 + 1.3875)
    doc 1: cancel tf 1          -> ln(8/3)   * 1 * 2.5 / (1 + 1.725)
    doc 2: refund tf 2          -> ln(1.6)   * 2 * 2.5 / (2 + 1.3875)
    """
    return [math.log(1.6) * 2.5 / 2.3875, math.log(8 / 3) * 2.5 / 2.725, math.log(1.6) * 5 / 3.3875]


def test_bm25_matches_the_hand_computed_scores() -> None:
    index = Bm25Index(K1, B)
    for doc in DOCS:
        index.add(tokenize(doc))
    scores = index.scores(tokenize("refund cancel"))
    expected = hand_scores()
    assert scores == {i: pytest.approx(expected[i], rel=1e-12) for i in range(3)}
    assert expected[1] > expected[2] > expected[0]  # ~0.900 > ~0.694 > ~0.492


async def test_rag_ranks_by_bm25_on_instructions_without_their_timestamp() -> None:
    method = RagMethod()
    await method.learn([record(p, body) for p, body in zip((1, 2, 3), DOCS, strict=True)])
    # "timestamp" and "1" would match every record if the timestamp line were indexed.
    assert [c.position for c in method.retrieve("Current timestamp: 1\n\nrefund cancel")] == [2, 3, 1]
    assert method.retrieve("Current timestamp: 1\n\nshipping address") == []
    assert method.context(view(9, "shipping address")) == ""


async def test_rag_context_shows_score_position_and_the_full_record_in_the_reference_text() -> None:
    method = RagMethod()
    first, second = record(1, "refund the order", reward=0.0), record(2, "refund refund please")
    await method.learn([first, second])
    context = method.context(view(9, "refund"))
    assert context.startswith("# Past cases\n")
    assert "## Case observed at stream position 2 — Score: 100/100.\n" + reference_record(second) in context
    assert "## Case observed at stream position 1 — Score: 0/100.\n" + reference_record(first) in context
    assert context.index("position 2") < context.index("position 1")


async def test_rag_shows_the_top_eight_and_breaks_ties_by_stream_order() -> None:
    method = RagMethod()
    await method.learn([record(p, "refund the order") for p in range(1, 11)])
    assert [c.position for c in method.retrieve("refund")] == [1, 2, 3, 4, 5, 6, 7, 8]


async def test_rag_caps_each_record_at_100k_characters() -> None:
    method = RagMethod()
    long, short = record(1, "refund", observation="x" * 150_000), record(2, "refund")
    await method.learn([long, short])
    state = method.state()
    assert len(state["cases"][0]["record"]) == 100_000 and state["cases"][0]["truncated"] is True
    assert state["cases"][1]["truncated"] is False
    context = method.context(view(9, "refund"))
    assert reference_record(long)[:100_000] + "\n  (record truncated)" in context
    assert reference_record(long) not in context and reference_record(short) in context


async def test_rag_recency_prefers_recent_records_of_equal_similarity() -> None:
    plain, recent = RAG.build(MethodSetup("retail_l1", "retail")), RAG_RECENCY.build(MethodSetup("retail_l1", "retail"))
    records = [record(1, "refund the order"), record(300, "refund the order")]
    for method in (plain, recent):
        await method.learn(records)
    assert isinstance(plain, RagMethod) and isinstance(recent, RagMethod)
    assert [c.position for c in plain.retrieve("refund")] == [1, 300]
    assert [c.position for c in recent.retrieve("refund")] == [300, 1]


async def test_a_continuous_reward_shows_as_the_reference_score_line_writes_it() -> None:
    method = RagMethod()
    await method.learn([record(1, "pitch the blender", reward=0.735, domain="pitch")])
    assert "— Score: 73.5/100.\n" in method.context(view(2, "pitch the blender", domain="pitch"))

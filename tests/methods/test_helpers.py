"""The shared helpers: JSON extraction from messy replies, tokens, clipping, near-duplicates."""

from __future__ import annotations

import pytest

from methods.llm_json import as_int, extract_json, items_of
from methods.text import clip, estimate_tokens, near_duplicate, short_record, strip_timestamp, tokenize
from tests.methods.fakes import record


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1}', {"a": 1}),
    ('Sure! ```json\n{"a": [1, 2]}\n``` hope that helps', {"a": [1, 2]}),
    ('prose {broken json} then {"b": true}', {"b": True}),
    ('[{"id": "r1"}] trailing', [{"id": "r1"}]),
    ("no json here", None),
    ('{"a": 1', None),
    ("", None),
])
def test_extract_json_finds_the_first_value_that_parses(text: str, expected: object) -> None:
    assert extract_json(text) == expected


def test_items_of_keeps_objects_only() -> None:
    assert items_of({"ops": [{"op": "add"}, "junk", 3]}, "ops") == [{"op": "add"}]
    assert items_of([{"op": "add"}], "ops") == [{"op": "add"}]
    assert items_of({"ops": "nope"}, "ops") == []
    assert items_of(None, "ops") == []


@pytest.mark.parametrize(("value", "expected"), [
    (3, 3), ("3", 3), ("b3", 3), ("r12", 12), ("[b7]", 7), (True, None), ("bee", None), (None, None), (2.5, None),
])
def test_as_int_reads_ids(value: object, expected: int | None) -> None:
    assert as_int(value) == expected


def test_strip_timestamp_and_tokenize() -> None:
    assert strip_timestamp("Current timestamp: 12\n\nRefund #W1.\n\nThanks") == "Refund #W1.\n\nThanks"
    assert strip_timestamp("No stamp here") == "No stamp here"
    assert tokenize("Refund ORDER #W12, isn't it?") == ["refund", "order", "w12", "isn", "t", "it"]


def test_clip_keeps_the_head_and_the_score_line() -> None:
    text = "head " + "x" * 10_000 + "\nScore: 100/100."
    clipped = clip(text, 1_000)
    assert clipped.startswith("head ") and clipped.endswith("Score: 100/100.")
    assert len(clipped) < 1_100
    assert clip("short", 1_000) == "short"


def test_estimate_tokens_rounds_up() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]


def test_near_duplicate_respects_numbers_and_negations() -> None:
    assert near_duplicate("Escalate loans above 5000 to a manager", "escalate loans above 5000 to a manager!")
    assert not near_duplicate("Escalate loans above 5000 to a manager", "Escalate loans above 3000 to a manager")
    assert not near_duplicate("Refund the order in full", "Do not refund the order in full")
    assert not near_duplicate("Refund the order", "Cancel the shipment today")


def test_short_record_keeps_instruction_actions_and_score() -> None:
    short = short_record(record(4, observation="a long observation", reward=0.0))
    assert short == ("INSTRUCTION: Current timestamp: 4\n\nRefund order #W1.\n\n"
                     '  action: get_order_details({"order_id":"#W1"})\n'
                     '  action: finish({"answer":"ok"})\n'
                     "Score: 0/100.")

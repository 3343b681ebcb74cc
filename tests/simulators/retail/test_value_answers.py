"""The public export's value answers (`{"kind": "value", "expect": ..., "compare": ...}`) graded by each
compare mode, case by case: each row is one a mutation of the grader let through (bench/README.md,
"Mutation testing")."""

from __future__ import annotations

import pytest

from simulators.domains.retail.grader import check_answer
from simulators.protocol import JSON

ROWS: list[tuple[str, JSON, JSON, bool]] = [
    ("int", "3", "3.0", True),  # a number, not a string: "3.0" is 3
    ("int", "3", "$3", True),
    ("int", "3.5", 3.5, False),  # an int answer must be whole
    ("int", "3", "3 or 4", False),
    ("int", "3", None, False),
    ("float", "10", "10.5", False),
    ("float", "10", "10.004", True),
    ("float", "38.25", "38.25 or 40", False),
    ("set", ["a", "b"], ["b", "a"], True),  # a set: order does not matter
    ("set", ["a"], "a", False),  # the answer must be a list
    ("set", "ab", ["a", "b"], False),  # and so must the expected value
    ("set", ["a b"], ["A-B"], True),
    ("str_norm", "Gold tier", "gold-tier", True),
    ("str_norm", "ab", "a b", True),
    ("str_norm", "gold", "silver", False),
    ("str_norm", "", "!!", False),  # nothing expected is never matched
    ("str_norm", "gold", None, False),
]


@pytest.mark.parametrize(("mode", "expect", "got", "passes"), ROWS)
def test_a_value_answer_is_graded_by_its_compare_mode(mode: str, expect: JSON, got: JSON, passes: bool) -> None:
    ok, why = check_answer({"kind": "value", "expect": expect, "compare": mode}, {"answer": got})
    assert ok is passes and (ok or why == "wrong answer")

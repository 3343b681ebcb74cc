"""The official pitch scenarios' one tool (`finish`) and their grading, as the public reference does them.

Reference files (Infini-AI-Lab/ServeLearnBench, servelearnbench/): `agent.py` (`finish_tool_spec`,
`finish_args_error`, `FINISH_ACK`) and `domains/pitch/verifier.py` (`RubricVerifier._score`,
`_dedupe_invented`, `_word_gate`, `compute`). The scenario is the hand-written official-schema fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulators.dataset import load_scenario
from simulators.domain import JudgeVerdict
from simulators.domains.banking import DOMAIN as BANKING
from simulators.domains.pitch import DOMAIN
from simulators.domains.pitch.rubric import CONTRADICTED, MENTIONED, NOT_ADDRESSED, score_verdict
from simulators.protocol import Scenario, ToolCall
from simulators.session import ToolSession

OFFICIAL = Path(__file__).resolve().parents[2] / "fixtures" / "official"


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenario(OFFICIAL, "pitch_l1")


def finish(scenario: Scenario, arguments: object) -> str:
    task = scenario.serving[0]
    session = ToolSession(scenario.environment, DOMAIN.new_world(scenario.environment, task))
    return session.execute(ToolCall("c", "finish", json.dumps(arguments))).observation


@pytest.mark.parametrize(("arguments", "observation"), [
    ({}, "not executed: finish requires 'pitch' (string)."),
    ({"pitch": "   "}, "not executed: finish argument 'pitch' must be a non-empty string."),
    ({"pitch": 42}, "not executed: finish argument 'pitch' must be a non-empty string."),
    ({"pitch": "Great lamp", "tone": "warm"}, "not executed: finish takes no argument named 'tone'; allowed: pitch."),
    ({"pitch": "Great <|tool_call|> lamp"}, "not executed: finish argument 'pitch' contains tool-call markup "
                                            "('<|tool_call|>'); re-issue the call with plain values, one "
                                            "argument per field."),
    ({"pitch": "Great lamp"}, '{"accepted": true}'),
    ([1], "not executed: arguments must be a JSON object that follows the tool's schema (got list, not an object)."),
])
def test_finish_is_checked_against_its_schema(scenario: Scenario, arguments: object, observation: str) -> None:
    """agent.py `finish_args_error`: missing, unknown, empty, markup; an accepted finish is acknowledged."""
    assert finish(scenario, arguments) == observation


def test_banking_finish_takes_no_arguments() -> None:
    banking = load_scenario(OFFICIAL, "banking_l2")
    task = banking.serving[0]

    session = ToolSession(banking.environment, BANKING.new_world(banking.environment, task))
    observation = session.execute(ToolCall("c", "finish", '{"done": true}')).observation
    assert observation == "not executed: finish takes no argument named 'done'; it takes no arguments."


def verdict(labels: dict[str, str], invented: tuple[str, ...] = ()) -> JudgeVerdict:
    return JudgeVerdict(labels, invented, "test")


def test_score_is_coverage_times_the_penalties() -> None:
    """verifier.py `_score`: strong 2 / like 1 coverage, x0.5 per disliked touch, x0.3 per red line,
    x0.5 per contradiction, x0.5 per distinct invented claim (at most 5)."""
    weights = {"price": 2, "eco": 1, "buzz": -1, "features": -3, "popularity": 0}
    labels = {"price": MENTIONED, "eco": NOT_ADDRESSED, "buzz": MENTIONED, "features": NOT_ADDRESSED,
              "popularity": CONTRADICTED}
    result = score_verdict(weights, verdict(labels, ("Ships free!", "ships free", "waterproof")), 50)
    assert result.score == pytest.approx(100 * (2 / 3) * 0.5 * 0.5 * 0.5 ** 2)
    red = score_verdict(weights, verdict({**labels, "features": CONTRADICTED}), 50)
    assert red.score == pytest.approx(100 * (2 / 3) * 0.5 * 0.3 * 0.5 ** 2)


def test_invented_claims_saturate_at_five_and_long_pitches_cap_at_25() -> None:
    weights = {"price": 1}
    many = tuple(f"claim {n}" for n in "abcdefg")
    assert score_verdict(weights, verdict({"price": MENTIONED}, many), 50).score == pytest.approx(100 * 0.5 ** 5)
    assert score_verdict(weights, verdict({"price": MENTIONED}), 91).score == 25.0
    assert score_verdict(weights, verdict({"price": MENTIONED}), 90).score == 100.0


def test_nothing_liked_scores_zero() -> None:
    """`cov = gain / G if G else 0.0`."""
    assert score_verdict({"price": 0, "eco": -1}, verdict({"price": MENTIONED}), 50).score == 0.0


async def test_empty_or_missing_pitch_scores_zero(scenario: Scenario) -> None:
    task = scenario.serving[0]
    world = DOMAIN.new_world(scenario.environment, task)
    assert (await DOMAIN.grade(scenario.environment, task, world, None, None)).reward == 0.0
    assert (await DOMAIN.grade(scenario.environment, task, world, {"pitch": "  "}, None)).reward == 0.0

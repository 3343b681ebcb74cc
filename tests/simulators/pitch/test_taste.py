"""Reading a customer's taste from bulletin prose, and the errors when the structure is missing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from simulators.dataset import load_dataset
from simulators.domains.pitch import DOMAIN
from simulators.domains.pitch.grader import attribute_weights, task_weights
from simulators.domains.pitch.sheet import parse_sheet, task_sheet
from simulators.domains.pitch.taste import BulletinError, parse_taste
from simulators.protocol import Evaluator, Scenario, ScenarioEnvironment, Task, Window

ROOT = Path(__file__).parents[2] / "fixtures" / "official"

BULLETIN = """The customer is a weekend tinkerer. They enjoy fixing things; they hate waste.
They like: Loaded with features; a long warranty, honoured for years;  priced fairly.
They dislike: luxury pricing (do NOT bring this up); the talk of the town; made of plastic.
Anything else is neutral to them."""


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_dataset(ROOT, only=["pitch_l1"]).scenarios["pitch_l1"]


def with_bulletin(environment: ScenarioEnvironment, window: int, text: str) -> ScenarioEnvironment:
    windows = tuple(replace(w, oracle_bulletin=text) if w.window == window else w for w in environment.windows)
    return replace(environment, windows=windows)


def test_lists_separators_and_red_lines() -> None:
    taste = parse_taste(BULLETIN)
    assert dict(taste.weights) == {
        "loaded with features": 1, "a long warranty, honoured for years": 1, "priced fairly": 1,
        "luxury pricing": -3, "the talk of the town": -1, "made of plastic": -1,
    }
    assert taste.weight("  Loaded with  features. ") == 1  # case, spacing and a final period ignored
    assert taste.weight("a brand-new release") is None


@pytest.mark.parametrize(("text", "message"), [
    ("The customer likes cheap things.", "They like:"),
    ("They like: a.\nThey like: b.\nThey dislike: c.", "found 2"),
    ("They like: a (do NOT bring this up).\nThey dislike: b.", "red line"),
    ("They like: a; b.\nThey dislike: b.", "two different weights"),
])
def test_malformed_bulletins_are_refused(text: str, message: str) -> None:
    with pytest.raises(BulletinError, match=message):
        parse_taste(text)


def test_an_unreadable_bulletin_names_scenario_and_window(scenario: Scenario) -> None:
    task = scenario.test[1]
    environment = with_bulletin(scenario.environment, task.window, "A customer with taste.")
    with pytest.raises(BulletinError, match=rf"pitch_l1 window {task.window}: .*They like:"):
        attribute_weights(environment, task)


def test_a_task_without_its_window_is_refused(scenario: Scenario) -> None:
    task = replace(scenario.test[0], window=7)
    with pytest.raises(BulletinError, match="pitch_l1 window 7"):
        attribute_weights(scenario.environment, task)


def test_a_bulletin_sharing_no_phrase_with_the_sheet_is_refused(scenario: Scenario) -> None:
    task = scenario.test[0]
    environment = with_bulletin(scenario.environment, task.window, "They like: cheap.\nThey dislike: trendy.")
    with pytest.raises(BulletinError, match="none of the sheet's fact lines"):
        attribute_weights(environment, task)


def test_fact_lines_that_do_not_pair_with_the_product_are_refused(scenario: Scenario) -> None:
    task = scenario.test[0]
    cut = task.instruction.replace("  - loaded with features\n", "")
    with pytest.raises(BulletinError, match="do not pair"):
        attribute_weights(scenario.environment, replace(task, instruction=cut))


def test_phrases_off_this_sheet_do_not_matter(scenario: Scenario) -> None:
    task = scenario.test[0]
    base = attribute_weights(scenario.environment, task)
    extra = scenario.environment.windows[task.window].oracle_bulletin.replace(
        "They dislike: ", "They dislike: made of plastic; a one-year warranty (do NOT bring this up); ")
    assert attribute_weights(with_bulletin(scenario.environment, task.window, extra), task) == base


def test_a_profile_in_the_task_wins_over_the_bulletin(scenario: Scenario) -> None:
    task = scenario.test[0]
    metadata = {**task.evaluator.metadata, "profile": {"price.high": 2, "features.full": -1}}
    task = replace(task, evaluator=Evaluator(**{**vars(task.evaluator), "metadata": metadata}))
    environment = with_bulletin(scenario.environment, task.window, "unreadable")
    assert task_weights(environment, task) == {"price.high": 2, "features.full": -1}
    assert attribute_weights(environment, task)["price"] == 2


def test_the_customer_key_is_not_used(scenario: Scenario) -> None:
    task = scenario.test[0]
    metadata = {**task.evaluator.metadata, "customer_key": "nobody_we_know"}
    renamed = replace(task, evaluator=Evaluator(**{**vars(task.evaluator), "metadata": metadata}))
    assert attribute_weights(scenario.environment, renamed) == attribute_weights(scenario.environment, task)


def test_the_writer_reads_every_fixture_sheet(scenario: Scenario) -> None:
    for task in (*scenario.serving, *scenario.test):
        read = [(i.attribute, i.value) for i in parse_sheet(task.instruction).items]
        assert read == [(i.attribute, i.value) for i in task_sheet(task).items], task.task_id


async def test_an_empty_pitch_scores_zero_before_the_bulletin_is_read(scenario: Scenario) -> None:
    task: Task = scenario.test[0]
    environment = ScenarioEnvironment("", (), {}, {}, (Window(0, 1, "unreadable"),))
    grade = await DOMAIN.grade(environment, task, DOMAIN.new_world(environment, task), {"pitch": " "}, None)
    assert grade.reward == 0.0

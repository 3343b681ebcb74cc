"""Replay grading: gold scores 1 on every built-in task; every kind of wrong write scores 0."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pytest

from simulators.domains.banking import DOMAIN
from simulators.domains.banking.grader import answer_ok
from simulators.errors import ToolError
from simulators.protocol import JSON, Scenario, Task
from tests.simulators.banking.conftest import built

Call = tuple[str, Mapping[str, JSON]]


async def reward(scenario: Scenario, task: Task, calls: Iterable[Call], finished: bool = True) -> float:
    world = DOMAIN.new_world(scenario.environment, task)
    for name, arguments in calls:
        try:
            world.call(name, arguments)
        except ToolError:
            pass
    grade = await DOMAIN.grade(scenario.environment, task, world, {} if finished else None, None)
    return grade.reward


def gold(task: Task) -> list[Call]:
    return [(action.name, action.kwargs) for action in task.evaluator.actions]


def first_task(scenario: Scenario, wanted: Callable[[Task], bool]) -> Task:
    return next(t for t in scenario.serving + scenario.test if wanted(t))


def gold_named(name: str) -> Callable[[Task], bool]:
    return lambda task: task.evaluator.actions[0].name == name


async def test_gold_scores_one_on_every_task(scenario: Scenario) -> None:
    for task in scenario.serving + scenario.test:
        assert await reward(scenario, task, gold(task)) == 1.0, task.task_id


async def test_no_finish_and_no_decision_score_zero() -> None:
    scenario = built("banking_l1")
    task = scenario.test[0]
    assert await reward(scenario, task, gold(task), finished=False) == 0.0
    assert await reward(scenario, task, []) == 0.0


async def test_wrong_reason_code_scores_zero(scenario: Scenario) -> None:
    task = first_task(scenario, gold_named("escalate_case"))
    name, arguments = gold(task)[0]
    other = "reportable_amount" if arguments["reason"] != "reportable_amount" else "over_limit"
    assert await reward(scenario, task, [(name, {**arguments, "reason": other})]) == 0.0
    assert await reward(scenario, task, [("deny_case", arguments)]) == 0.0  # right code, wrong action


async def test_wrong_leg_scores_zero() -> None:
    scenario = built("banking_l2")
    task = first_task(scenario, gold_named("execute_leg"))
    leg = gold(task)[0][1]["leg"]
    wrong = 1 if leg != 1 else 2
    assert await reward(scenario, task, [("execute_leg", {"case_id": task.evaluator.metadata["case_id"],
                                                          "leg": wrong})]) == 0.0


async def test_wrong_batch_line_scores_zero() -> None:
    scenario = built("banking_l2")
    task = first_task(scenario, gold_named("decide_batch"))
    arguments = dict(gold(task)[0][1])
    decisions = [dict(d) for d in arguments["decisions"]]
    flipped = {"line": decisions[0]["line"], "action": "deny", "reason": "restricted_payee"}
    arguments["decisions"] = [flipped, *decisions[1:]]
    assert await reward(scenario, task, [("decide_batch", arguments)]) == 0.0


async def test_a_refused_decision_is_graded_on_the_final_state(scenario: Scenario) -> None:
    """As the reference grades it (engine/verifier.py `EvalVerifier.compute`): decisions are final, so a
    repeated or contradicting decision is refused and changes nothing; only where the case ended counts."""
    task = first_task(scenario, gold_named("approve_case"))
    case_id = task.evaluator.metadata["case_id"]
    twice = gold(task) + gold(task)
    approve_then_deny = gold(task) + [("deny_case", {"case_id": case_id, "reason": "over_limit"})]
    deny_then_approve = [("deny_case", {"case_id": case_id, "reason": "over_limit"})] + gold(task)
    assert await reward(scenario, task, twice) == 1.0
    assert await reward(scenario, task, approve_then_deny) == 1.0
    assert await reward(scenario, task, deny_then_approve) == 0.0


async def test_another_case_cannot_be_decided(scenario: Scenario) -> None:
    task, other = scenario.test[0], scenario.test[1]
    other_case = other.evaluator.metadata["case_id"]
    assert await reward(scenario, task, gold(task) + [("approve_case", {"case_id": other_case})]) == 1.0
    assert await reward(scenario, task, gold(other)) == 0.0


async def test_a_refused_argument_writes_nothing() -> None:
    """A bad reason code or a call of the wrong form is an ordinary, correctable error."""
    scenario = built("banking_l2")
    task = first_task(scenario, gold_named("execute_leg"))
    case_id = task.evaluator.metadata["case_id"]
    slips = [("approve_case", {"case_id": case_id}), ("deny_case", {"case_id": case_id, "reason": "nope"})]
    assert await reward(scenario, task, slips + gold(task)) == 1.0


@pytest.mark.parametrize("name", ["banking_l1", "banking_l3"])
async def test_grade_reports_what_failed(name: str) -> None:
    scenario = built(name)
    task = scenario.test[0]
    world = DOMAIN.new_world(scenario.environment, task)
    grade = await DOMAIN.grade(scenario.environment, task, world, {}, None)
    assert grade.judge == "replay" and grade.details["state_match"] is False


async def test_a_refusal_with_the_wrong_reason_code_scores_zero(scenario: Scenario) -> None:
    """A deny whose reason is another admissible code of the same scenario is wrong, not half right."""
    denials = [t for t in scenario.serving + scenario.test if gold_named("deny_case")(t)]
    assert denials, "the built-in scenario has refusal answers"
    codes = sorted({str(gold(t)[0][1]["reason"]) for t in denials} | {"over_limit", "reportable_amount"})
    for task in denials[:20]:
        name, arguments = gold(task)[0]
        other = next(code for code in codes if code != arguments["reason"])
        assert await reward(scenario, task, gold(task)) == 1.0
        assert await reward(scenario, task, [(name, {**arguments, "reason": other})]) == 0.0, task.task_id


REFUSAL = {"kind": "refuse", "reasons": ["over_limit", "sanctions_hit"]}


@pytest.mark.parametrize(("answer", "finish", "ok"), [
    # A null answer (every built-in banking task): right unless the agent declared a refusal.
    (None, {}, True),
    (None, {"decision": "refuse", "reason": "over_limit"}, False),
    # A refusal answer (the FORMAT.md rule a dataset may use): refused, for one of the admissible reasons.
    (REFUSAL, {"decision": "refuse", "reason": "over_limit"}, True),
    (REFUSAL, {"decision": "refuse", "reason": "sanctions_hit"}, True),
    (REFUSAL, {"decision": "refuse", "reason": "duplicate"}, False),
    (REFUSAL, {"decision": "refuse"}, False),
    (REFUSAL, {"reason": "over_limit"}, False),  # the right reason without refusing
    (REFUSAL, {"decision": "approve", "reason": "over_limit"}, False),
    ({"kind": "refuse", "reasons": "over_limit"}, {"decision": "refuse", "reason": "over_limit"}, False),
    # A value answer: numbers within a cent, anything else exactly and of the same type.
    (125.5, {"answer": 125.505}, True),
    (125.5, {"answer": 125.52}, False),
    (125.5, {"answer": "125.5"}, False),
    (3, {"answer": 3}, True),
    (3, {"answer": 3.004}, True),  # a float on either side compares as numbers
    (0.0, {"answer": 0.01}, True),  # within a cent, the cent included
    (1, {"answer": True}, False),
    ("approve", {"answer": "approve"}, True),
    ("approve", {"answer": "Approve"}, False),
])
def test_a_finish_is_graded_against_the_answer_as_format_md_says(answer: JSON, finish: Mapping[str, JSON],
                                                                 ok: bool) -> None:
    assert answer_ok(answer, finish) is ok


async def test_the_grade_needs_the_answer_too_and_names_what_failed() -> None:
    """A task whose answer is a refusal: the gold writes with no refusal declared score 0 (answer_ok False
    in the details), with one score 1; a gold action that fails is reported as gold_errors."""
    from dataclasses import replace

    scenario = built("banking_l1")
    task = scenario.test[0]
    refusing = replace(task, evaluator=replace(task.evaluator, answer=REFUSAL))
    world = DOMAIN.new_world(scenario.environment, refusing)
    for name, arguments in gold(refusing):
        world.call(name, arguments)
    missed = await DOMAIN.grade(scenario.environment, refusing, world, {}, None)
    assert missed.reward == 0.0 and missed.details == {"state_match": True, "answer_ok": False}
    said = await DOMAIN.grade(scenario.environment, refusing, world, {"decision": "refuse", "reason": "over_limit"},
                              None)
    assert said.reward == 1.0 and said.details["answer_ok"] is True
    broken = replace(task, evaluator=replace(task.evaluator, actions=(
        *task.evaluator.actions, replace(task.evaluator.actions[0], name="approve_case", kwargs={"case_id": "nope"}))))
    graded = await DOMAIN.grade(scenario.environment, broken, DOMAIN.new_world(scenario.environment, broken), {}, None)
    (error,) = graded.details["gold_errors"]  # type: ignore[misc]
    assert str(error).startswith("approve_case: ")

"""`data check --gold`: does every task of a dataset hold together and does its gold score 1.0?

Two kinds of problem, each naming the scenario and task:
- dangling ids: an id a task or the world's episode view points at that the world does not hold
  (a banking task's case, a case's account, merchant or payees; a retail task's order or user, an
  order listed in `_episode_view.base_orders`), so the episode would start on nothing;
- gold that does not replay: a gold action the world refuses, or gold actions plus the answer's
  finish that grade below 1.0 (`simulators.replay`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from simulators.domain import Judge
from simulators.domains.banking.records import find_case, referenced_payees
from simulators.protocol import JSON, Scenario, Task
from simulators.registry import get_domain
from simulators.replay import gold_calls, replay

__all__ = ["Problem", "dangling_ids", "gold_problems"]


@dataclass(frozen=True)
class Problem:
    scenario: str
    task_id: str
    what: str

    def line(self) -> str:
        return f"{self.scenario} {self.task_id}: {self.what}"


def _table(world: Mapping[str, JSON], name: str) -> Mapping[str, JSON]:
    table = world.get(name)
    return table if isinstance(table, dict) else {}


def _banking(world: Mapping[str, JSON], task: Task) -> Iterator[str]:
    case_id = task.evaluator.metadata.get("case_id")
    if not isinstance(case_id, str):
        return
    case = find_case(world, case_id)
    if case is None:
        yield f"case {case_id} is not in the world"
        return
    refs = [("accounts", case.get("account_id")), ("merchants", case.get("merchant_id"))]
    refs += [("payees", payee) for payee in referenced_payees(case)]
    for table, record_id in refs:
        if isinstance(record_id, str) and record_id not in _table(world, table):
            yield f"case {case_id} refers to {table} {record_id}, which is not in the world"


def _retail(world: Mapping[str, JSON], task: Task) -> Iterator[str]:
    """A task's order and user must exist, unless its answer is a `not_found` refusal (those name
    missing records on purpose)."""
    answer = task.evaluator.answer
    if isinstance(answer, dict) and "not_found" in (answer.get("reasons") or []):
        return
    for key, table, name in (("order_id", "orders", "order"), ("user_id", "users", "user")):
        wanted = task.evaluator.metadata.get(key)
        if isinstance(wanted, str) and wanted not in _table(world, table):
            yield f"{name} {wanted} is not in the world"


def _episode_view(world: Mapping[str, JSON]) -> Iterator[str]:
    view = world.get("_episode_view")
    base = view.get("base_orders") if isinstance(view, dict) else None
    orders = _table(world, "orders")
    for order_id in base if isinstance(base, list) else []:
        if order_id not in orders:
            yield f"_episode_view lists order {order_id}, which is not in the world"


def dangling_ids(scenario: Scenario) -> list[Problem]:
    world = scenario.environment.world
    problems = [Problem(scenario.name, "(world)", what) for what in _episode_view(world)]
    check = {"banking": _banking, "retail": _retail}.get(scenario.domain)
    if check is not None:
        for task in (*scenario.serving, *scenario.test):
            problems += [Problem(scenario.name, task.task_id, what) for what in check(world, task)]
    return problems


async def gold_problems(scenario: Scenario, judge: Judge | None = None) -> list[Problem]:
    """Every task whose gold is refused by the world or does not grade 1.0."""
    domain = get_domain(scenario.domain)
    problems = []
    for task in (*scenario.serving, *scenario.test):
        result = await replay(scenario, task, domain, gold_calls(scenario, task), judge)
        if result.errors:
            problems.append(Problem(scenario.name, task.task_id, "gold refused: " + "; ".join(result.errors)))
        elif result.grade.reward < 1.0:
            problems.append(Problem(scenario.name, task.task_id,
                                    f"gold scores {result.grade.reward:.2f} ({_why(result.grade.details)})"))
    return problems


def _why(details: Mapping[str, JSON]) -> str:
    shown = {k: v for k, v in details.items() if k in ("state_match", "answer_ok", "reason", "score", "why")}
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "no details"

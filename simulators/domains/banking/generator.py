"""Build the banking_l1..l3 scenarios: world, windows, serving and test tasks.

Deterministic in (scenario, seed): one `random.Random(f"{scenario}:{seed}")` drives everything, and
every iteration runs over tuples or insertion-ordered dicts built in a fixed order.

Per ticket: pick a family (see `_weights`), aim at a
hidden or a fully specified task with even odds, build candidate cases until one lands on the
aimed side (at most a few tries), then derive gold and labels with the rules engine: gold under
the window's active policy; `adapt` when a documents-follower would leave a different graded
state; `reopen` when the family's rule is back to its documented behaviour after differing in an
earlier window; `general` otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domains.banking.documents import bulletin, policy_manual, system_prompt, workflow_guide
from simulators.domains.banking.entities import Ids, Population, make_population
from simulators.domains.banking.resolve import Lookups, Outcome, decision_call, resolve, same_graded_state
from simulators.domains.banking.rules import Rule, parse_rules
from simulators.domains.banking.tickets import FAMILIES, Draft, Family, TicketContext
from simulators.domains.banking.timeline import TIERS, Tier, active_policy, changed_rules, rule_history
from simulators.domains.banking.tools import tool_schemas
from simulators.domains.banking.wording import instruction_body, with_timestamp
from simulators.protocol import JSON, Action, Evaluator, Scenario, ScenarioEnvironment, Task, Window

__all__ = ["FAMILY_WEIGHTS", "generate_scenario", "tier_of"]

_SINGLE_WEIGHTS = {
    "txn_electronics": 3.0, "txn_travel": 2.0, "txn_plain": 0.5,
    "limit_standing": 1.0, "limit_cap": 1.5, "limit_new_account": 2.0, "transfer_reporting": 2.0,
}
FAMILY_WEIGHTS: dict[int, dict[str, float]] = {
    1: {**_SINGLE_WEIGHTS, "txn_gift_card": 2.0, "transfer_watchlist": 2.0},
    2: {**_SINGLE_WEIGHTS, "txn_electronics": 2.0, "txn_corridor": 2.0, "txn_daily": 2.0,
        "transfer_new_payee": 2.0, "txn_legs": 1.5, "limit_legs": 1.0, "transfer_legs": 1.5,
        "transfer_batch": 1.5},
}
FAMILY_WEIGHTS[3] = FAMILY_WEIGHTS[2]
_TABLE = {"txn": "transactions", "limit": "limit_requests", "transfer": "transfers"}
_TRIES = 8


def tier_of(scenario: str) -> Tier:
    try:
        return TIERS[int(scenario.removeprefix("banking_l"))]
    except (KeyError, ValueError):
        raise ValueError(f"unknown banking scenario '{scenario}'; known: banking_l1, banking_l2, banking_l3") from None


@dataclass
class _Build:
    """Everything one scenario's generation accumulates."""

    scenario: str
    tier: Tier
    rng: random.Random
    ids: Ids
    population: Population
    world: dict[str, dict[str, JSON]]
    task_ids: set[str]


@dataclass(frozen=True)
class _WindowState:
    window: int
    active: Mapping[str, JSON]
    rules: tuple[Rule, ...]
    documented: tuple[Rule, ...]
    weights: dict[str, float]


def generate_scenario(scenario: str, seed: int) -> Scenario:
    tier = tier_of(scenario)
    rng = random.Random(f"{scenario}:{seed}")
    ids = Ids(rng)
    population = make_population(rng, ids)
    world: dict[str, dict[str, JSON]] = {
        "accounts": {}, "merchants": dict(population.merchants), "payees": dict(population.payees),
        "transactions": {}, "limit_requests": {}, "transfers": {},
    }
    build = _Build(scenario, tier, rng, ids, population, world, set())
    serving: list[Task] = []
    test: list[Task] = []
    windows: list[Window] = []
    documented = parse_rules(tier.documented)
    for window in range(tier.windows):
        active = active_policy(tier, window)
        state = _WindowState(window, active, parse_rules(active), documented, _weights(tier, window))
        first = window * tier.serving_per_window + 1
        windows.append(Window(window, first, bulletin(tier, active)))
        serving += [_task(build, state, "serving", first + k) for k in range(tier.serving_per_window)]
        last = first + tier.serving_per_window - 1
        test += [_task(build, state, "test", last) for _ in range(tier.test_per_window[window])]
    environment = ScenarioEnvironment(
        system_prompt=system_prompt(tier), tools=tool_schemas(tier.multi_part),
        docs={"policy": policy_manual(tier), "workflow": workflow_guide(tier)}, world=world,
        windows=tuple(windows),
    )
    return Scenario(scenario, "banking", f"L{tier.level}", environment, tuple(serving), tuple(test))


def _weights(tier: Tier, window: int) -> dict[str, float]:
    """Family weights of a window: a family whose rule changes now weighs double (the change must be
    learnable from this window's evidence), and one whose rule differs from the documents weighs half
    again, so that every window has plenty of hidden tasks."""
    changed = changed_rules(tier, window)
    diverging = {rule_id for family in FAMILIES.values() for rule_id in family.focus
                 if rule_history(tier, rule_id, window)[0]}
    weights = {}
    for name, weight in FAMILY_WEIGHTS[tier.level].items():
        focus = set(FAMILIES[name].focus)
        weights[name] = weight * (2.0 if focus & changed else 1.0) * (1.5 if focus & diverging else 1.0)
    return weights


def _lookups(build: _Build, draft: Draft) -> Lookups:
    merchant = build.population.merchants.get(str(draft.case.get("merchant_id")), {})
    return Lookups(account=draft.account, merchant=merchant, payees=build.population.payees)


def _outcomes(build: _Build, state: _WindowState, draft: Draft) -> tuple[Outcome, Outcome]:
    case_id, lookups = str(draft.case["case_id"]), _lookups(build, draft)
    return (resolve(state.rules, case_id, draft.case, lookups),
            resolve(state.documented, case_id, draft.case, lookups))


def _draw(build: _Build, state: _WindowState, family: Family) -> tuple[Draft, Outcome, Outcome]:
    """A case on the aimed side (hidden or not) when the family can produce one within a few tries."""
    context = TicketContext(build.rng, build.ids, build.population, (state.active, build.tier.documented))
    want_hidden = build.rng.random() < 0.5
    for _ in range(_TRIES):
        draft = family.build(context)
        truth, docs = _outcomes(build, state, draft)
        if (not same_graded_state(truth, docs)) == want_hidden:
            break
    return draft, truth, docs


def _slice(build: _Build, state: _WindowState, family: Family, truth: Outcome, docs: Outcome) -> str:
    if not same_graded_state(truth, docs):
        return "adapt"
    for rule_id in family.focus:
        differs_now, differed_before = rule_history(build.tier, rule_id, state.window)
        if differed_before and not differs_now:
            return "reopen"
    return "general"


def _task(build: _Build, state: _WindowState, split: str, position: int) -> Task:
    names = tuple(state.weights)
    family = FAMILIES[build.rng.choices(names, weights=[state.weights[n] for n in names])[0]]
    draft, truth, docs = _draw(build, state, family)
    case = draft.case
    if truth.accepted:
        case["_accept"] = list(truth.accepted)
    build.world["accounts"][str(draft.account["account_id"])] = draft.account
    build.world[_TABLE[family.kind]][str(case["case_id"])] = case
    name, kwargs = decision_call(str(case["case_id"]), truth)
    slice_ = _slice(build, state, family, truth, docs)
    body = instruction_body(build.rng, case, build.population.merchants, build.population.payees)
    metadata: dict[str, JSON] = {
        "t": position, "case_id": case["case_id"], "account_id": case["account_id"], "kind": case["kind"],
        "form": truth.form, "focus": list(family.focus), "decision": verdict_key(truth),
        "docs_decision": verdict_key(docs),
    }
    return Task(
        task_id=_task_id(build), scenario=build.scenario, domain="banking", tier=f"L{build.tier.level}",
        split="serving" if split == "serving" else "test", window=state.window, timestamp=position,
        category="hidden" if slice_ == "adapt" else "fully_specified",
        instruction=with_timestamp(position, body),
        evaluator=Evaluator(slice_, family.name, (Action(name, kwargs),), None, metadata),
    )


def _task_id(build: _Build) -> str:
    while True:
        task_id = f"bank{build.tier.level}_{build.rng.getrandbits(40):010x}"
        if task_id not in build.task_ids:
            build.task_ids.add(task_id)
            return task_id


def verdict_key(outcome: Outcome) -> str:
    """A short readable label of an outcome, for metadata and reports."""
    if outcome.form == "batch":
        return "batch:" + "|".join(v.key for _, v in outcome.lines)
    if outcome.leg is not None:
        return f"execute:leg{outcome.leg}"
    return outcome.verdict.key

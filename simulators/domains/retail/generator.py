"""Build a retail scenario (retail_l1, retail_l2, retail_l3), deterministically in (scenario, seed).

For every window: the active policy (timeline), the recipe pools (recipes), then serving and test
tasks drawn from the pools, each realized as a fresh customer and order (profiles, population), its
gold outcome decided under the active policy and its slice by comparison with the documents
(engine), and its message written (wording). Window lengths vary a little so time does not reveal
boundaries; test tasks carry the timestamp of their window's last serving task.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from simulators.domains.retail import documents, timeline
from simulators.domains.retail.catalog import Catalog, IdMint, build_catalog
from simulators.domains.retail.engine import Outcome, decide
from simulators.domains.retail.population import Built, Population
from simulators.domains.retail.profiles import GENERATED_MECHANICS, Recipe, SamplingContext, sample_profile
from simulators.domains.retail.recipes import Pools, WindowPolicies, build_pools
from simulators.domains.retail.state import json_copy
from simulators.domains.retail.tools import TOOLS
from simulators.domains.retail.vocabulary import Rule, parse_policy, policy_json
from simulators.domains.retail.wording import instruction, message
from simulators.protocol import Evaluator, Scenario, ScenarioEnvironment, Task, Window

__all__ = ["COUNTS", "generate"]

COUNTS: dict[str, tuple[int, int, int]] = {
    "retail_l1": (6, 720, 384),
    "retail_l2": (7, 810, 765),
    "retail_l3": (8, 624, 537),
}
"""scenario -> (windows, serving tasks, test tasks)."""

ADAPT_SHARE = 0.45
REOPEN_SHARE = 0.12
MULTI_SHARE = 0.5


@dataclass
class _Build:
    scenario: str
    tier: str
    rng: random.Random
    catalog: Catalog
    population: Population
    docs: tuple[Rule, ...]
    task_ids: set[str]


def generate(scenario: str, seed: int) -> Scenario:
    plan = timeline.plan_for(scenario)
    windows_count, serving_total, test_total = COUNTS[scenario]
    rng = random.Random(f"{scenario}:{seed}")
    mint = IdMint(rng)
    catalog = build_catalog(rng, mint)
    build = _Build(scenario, plan.tier, rng, catalog, Population(mint, catalog),
                   parse_policy(policy_json(timeline.DOCUMENTED)), set())
    serving_sizes, test_sizes = _sizes(serving_total, windows_count, rng), _even(test_total, windows_count)
    serving: list[Task] = []
    test: list[Task] = []
    windows = []
    for window in range(windows_count):
        active = timeline.active_policy(plan, window)
        policies = _policies(plan, window, active)
        context = SamplingContext(build.docs, parse_policy(policy_json(active)), policies.unseen)
        pools = build_pools(policies, rng, _prober(build, context, seed, window))
        windows.append(Window(window, len(serving) + 1, documents.bulletin(active)))
        for recipe in _compose(pools, serving_sizes[window], rng, policies.multi):
            serving.append(_task(build, recipe, context, window, "serving", len(serving) + 1))
        for recipe in _compose(pools, test_sizes[window], rng, policies.multi):
            test.append(_task(build, recipe, context, window, "test", len(serving)))
    return Scenario(scenario, "retail", plan.tier, _environment(build, tuple(windows)), tuple(serving), tuple(test))


def _policies(plan: timeline.TierPlan, window: int, active: dict[str, Rule]) -> WindowPolicies:
    unseen = frozenset(value for value, first in plan.introduced.items() if first > window)
    earlier = tuple(timeline.active_policy(plan, w) for w in range(window))
    return WindowPolicies(dict(timeline.DOCUMENTED), active, earlier, unseen, multi=plan.tier != "L1")


def _prober(build: _Build, context: SamplingContext, seed: int, window: int) -> Callable[[Recipe], str]:
    """Realizes a recipe on throwaway records to learn its slice (raises Infeasible)."""
    rng = random.Random(f"{build.scenario}:{seed}:probe:{window}")
    scratch = Population(IdMint(rng), build.catalog)

    def slice_of(recipe: Recipe) -> str:
        built = scratch.build(sample_profile(recipe, context, rng), rng)
        gold = decide(built.request, built.records, context.active)
        return _slice(recipe, gold, decide(built.request, built.records, context.docs))

    return slice_of


def _slice(recipe: Recipe, gold: Outcome, docs: Outcome) -> str:
    if not _passes(docs, gold):
        return "adapt"
    return "reopen" if recipe.intent == "reopen" else "general"


def _passes(candidate: Outcome, gold: Outcome) -> bool:
    """Would an agent that produced `candidate` score on a task whose gold is `gold`?"""
    if candidate.actions != gold.actions:
        return False
    if isinstance(gold.answer, dict):
        return candidate.cite is not None and candidate.cite in gold.answer["reasons"]
    if isinstance(gold.answer, float):
        return isinstance(candidate.answer, float) and abs(candidate.answer - gold.answer) < 0.01
    return candidate.answer is None


def _task(build: _Build, recipe: Recipe, context: SamplingContext, window: int, split: str, position: int) -> Task:
    rng = build.rng
    built = build.population.build(sample_profile(recipe, context, rng), rng)
    gold = decide(built.request, built.records, context.active)
    slice_ = _slice(recipe, gold, decide(built.request, built.records, context.docs))
    text = instruction(position, built.records, message(built.request, built.records, build.catalog, rng))
    evaluator = Evaluator(slice=slice_, family=recipe.family, actions=gold.actions, answer=gold.answer,
                          metadata=_metadata(built, position, recipe))
    return Task(_task_id(build), build.scenario, "retail", build.tier, "serving" if split == "serving" else "test",
                window, position, "hidden" if slice_ == "adapt" else "fully_specified", text, evaluator)


def _metadata(built: Built, position: int, recipe: Recipe) -> dict[str, object]:
    return {"t": position, "order_id": str(built.records.order["order_id"]), "rules": list(recipe.rules)}


def _task_id(build: _Build) -> str:
    while True:
        task_id = f"rt_{build.rng.getrandbits(40):010x}"
        if task_id not in build.task_ids:
            build.task_ids.add(task_id)
            return task_id


def _compose(pools: Pools, count: int, rng: random.Random, multi: bool) -> list[Recipe]:
    """`count` recipes: ADAPT_SHARE adapt (half of them touching two rules in L2/L3), some reopen, the
    rest general; each pool is cycled through in a shuffled order so every recipe gets its turn."""
    adapt = max(1, round(count * ADAPT_SHARE))
    reopen = round(count * REOPEN_SHARE) if pools.reopen else 0
    two_rules = round(adapt * MULTI_SHARE) if multi and pools.multi else 0
    chosen = _cycle(pools.multi, two_rules, rng) + _cycle(pools.adapt, adapt - two_rules, rng)
    chosen += _cycle(pools.reopen, reopen, rng) + _cycle(pools.general, count - adapt - reopen, rng)
    rng.shuffle(chosen)
    return chosen


def _cycle(pool: list[Recipe], count: int, rng: random.Random) -> list[Recipe]:
    if count <= 0:
        return []
    if not pool:
        raise ValueError("a window has no recipe of a needed kind; check the tier plan")
    chosen: list[Recipe] = []
    iterator: Iterator[Recipe] = iter(())
    while len(chosen) < count:
        recipe = next(iterator, None)
        if recipe is None:
            order = list(pool)
            rng.shuffle(order)
            iterator = iter(order)
            continue
        chosen.append(recipe)
    return chosen


def _sizes(total: int, count: int, rng: random.Random) -> list[int]:
    """Window lengths summing to `total`, each within about 20% of the mean."""
    weights = [rng.uniform(0.8, 1.2) for _ in range(count)]
    sizes = [int(total * weight / sum(weights)) for weight in weights]
    for index in range(total - sum(sizes)):
        sizes[index % count] += 1
    return sizes


def _even(total: int, count: int) -> list[int]:
    return [total // count + (1 if index < total % count else 0) for index in range(count)]


def _environment(build: _Build, windows: tuple[Window, ...]) -> ScenarioEnvironment:
    world = {
        "users": build.population.users, "orders": build.population.orders, "products": build.catalog.products,
        "_episode_view": {"base_orders": []},
        "_mechanics": {kind: list(statuses) for kind, statuses in GENERATED_MECHANICS.items()},
    }
    docs = {"policy": documents.policy_document(timeline.DOCUMENTED), "workflow": documents.workflow_document()}
    tools = tuple(json_copy(tool) for tool in TOOLS)  # each scenario owns its schemas
    return ScenarioEnvironment(documents.system_prompt(), tools, docs, world, windows)

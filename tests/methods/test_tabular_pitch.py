"""tabular, pitch adapter: the rubric, reading a pitch, solving for weights, exploring, drift and return."""

from __future__ import annotations

import random

import orjson

from methods.tabular.pitch import (
    TENTATIVE,
    Observation,
    PitchAdapter,
    mentioned_values,
    plausible_weights,
    predicted_score,
)
from simulators.domains.pitch import planner
from simulators.domains.pitch.attributes import ATTRIBUTES, L1_DIMS
from simulators.domains.pitch.sheet import Sheet, SheetItem, render_instruction
from simulators.domains.pitch.wording import SHEET_PHRASINGS
from simulators.protocol import TaskView
from simulators.record import EpisodeRecord, Step

# Two customers over the five L1 dimensions (rule id -> weight; unlisted values are neutral).
THRIFTY = {"price.low": 2, "price.mid": 1, "price.high": -3, "features.full": 1, "eco.eco": -1, "buzz.viral": -1}
HIPSTER = {"popularity.niche": 2, "buzz.under_the_radar": 1, "popularity.many_users": -3, "price.low": -1,
           "features.minimal": 1}


def sheet(rng: random.Random, index: int) -> Sheet:
    items = []
    for dim in L1_DIMS:
        value = rng.choice(ATTRIBUTES[dim])
        items.append(SheetItem(dim, value, SHEET_PHRASINGS[(dim, value)][0]))
    return Sheet(f"Item {index}", "desk lamp", tuple(items))


def best(product: Sheet, profile: dict[str, int]) -> float:
    """What an oracle scores: state exactly the liked facts (0 when the sheet has none)."""
    values = [f"{item.attribute}.{item.value}" for item in product.items]
    return predicted_score(profile, values, [v for v in values if profile.get(v, 0) > 0])


def regret(adapter: PitchAdapter, positions: range, rng: random.Random, profile: dict[str, int]) -> list[float]:
    products = [sheet(rng, position) for position in positions]
    return [best(p, profile) - play(adapter, position, p, profile) for position, p in zip(positions, products,
                                                                                           strict=True)]


def play(adapter: PitchAdapter, position: int, product: Sheet, profile: dict[str, int]) -> float:
    """One serving episode: the scripted planner pitches with the adapter's block; the rubric scores it
    against the hidden profile; the adapter learns from the record."""
    instruction = render_instruction(position, "Product to pitch:", product, "Write your pitch.")
    task = TaskView(f"t{position}", "pitch_l1", "pitch", "L1", position, instruction)
    call = planner.next_call(instruction, adapter.context(task), [])
    pitch = str(call.arguments["pitch"])
    values = [f"{item.attribute}.{item.value}" for item in product.items]
    score = predicted_score(profile, values, mentioned_values(pitch, values, (product.name, product.category)))
    steps = (Step("", "", "finish", orjson.dumps({"pitch": pitch}).decode(), "Episode finished."),)
    adapter.learn(EpisodeRecord(task, position, steps, score / 100, {"pitch": pitch}, "finish"))
    return score


def test_predicted_score_is_the_rubric() -> None:
    weights = {"price.low": 2, "features.full": 1, "eco.eco": -1, "buzz.viral": -3}
    sheet_values = ["price.low", "features.full", "eco.eco", "buzz.viral", "popularity.niche"]
    assert predicted_score(weights, sheet_values, ["price.low", "features.full"]) == 100.0
    assert predicted_score(weights, sheet_values, ["price.low"]) == 100.0 * 2 / 3
    assert predicted_score(weights, sheet_values, ["price.low", "eco.eco"]) == 100.0 * 2 / 3 * 0.5
    assert abs(predicted_score(weights, sheet_values, ["features.full", "buzz.viral"]) - 100 / 3 * 0.3) < 1e-9
    assert predicted_score(weights, sheet_values, ["eco.eco"]) == 0.0
    assert predicted_score({}, sheet_values, sheet_values) == 0.0  # nothing on the sheet is liked


def test_mentioned_values_reads_the_pitch_with_the_lexicon() -> None:
    values = ["price.low", "eco.eco", "buzz.viral"]
    pitch = "Meet the Lumo. It is easy on the wallet. It is built from sustainable materials. Worth a look."
    assert mentioned_values(pitch, values, ("Lumo", "lamp")) == ("price.low", "eco.eco")
    # The product's own name is not a claim.
    assert mentioned_values("Meet the Viral Trending lamp. It is cheap.", values,
                            ("Viral Trending", "lamp")) == ("price.low",)


def test_plausible_weights_are_those_that_keep_every_observation() -> None:
    observations = [Observation(1, ("price.low", "eco.eco"), ("price.low", "eco.eco"), 50 * 10_000)]
    weights = {"price.low": 1, "eco.eco": -1}
    assert plausible_weights(weights, "eco.eco", observations) == [-1]
    assert plausible_weights(weights, "price.low", observations) == [2, 1]


def test_the_adapter_learns_a_customer_from_scores_alone_exploring_on_the_way() -> None:
    rng = random.Random(7)
    adapter = PitchAdapter()
    early = regret(adapter, range(1, 31), rng, THRIFTY)
    late = regret(adapter, range(31, 51), rng, THRIFTY)
    assert late == [0.0] * 20
    assert sum(early) > 0  # the first pitches explore
    for value, weight in THRIFTY.items():
        assert (adapter.weights.get(value, 0) > 0) == (weight > 0), value
    # Values not settled yet are stated tentatively, ranked below settled likes.
    fresh = PitchAdapter()
    play(fresh, 1, sheet(random.Random(1), 1), THRIFTY)
    probe = render_instruction(2, "Product to pitch:", sheet(random.Random(2), 2), "Write your pitch.")
    assert TENTATIVE in fresh.context(TaskView("t", "pitch_l1", "pitch", "L1", 2, probe)).values()


def test_a_changed_customer_is_relearned_and_a_returning_one_recognised() -> None:
    rng = random.Random(11)
    adapter = PitchAdapter()
    regret(adapter, range(1, 41), rng, THRIFTY)
    assert regret(adapter, range(41, 81), rng, HIPSTER)[-15:] == [0.0] * 15
    assert adapter.library and all(o.position > 40 for o in adapter.observations)
    assert adapter.weights.get("popularity.niche", 0) > 0 and adapter.weights.get("price.low", 0) <= 0
    # THRIFTY returns: once a pitch contradicts the current customer, the library's match is taken whole.
    back = regret(adapter, range(81, 96), rng, THRIFTY)
    assert adapter.anchored
    assert back[-8:] == [0.0] * 8


def test_state_round_trips_to_the_same_context_and_learning() -> None:
    rng = random.Random(3)
    adapter = PitchAdapter()
    for position in range(1, 15):
        play(adapter, position, sheet(rng, position), HIPSTER)
    encoded = orjson.dumps(adapter.state())
    restored = PitchAdapter()
    restored.load(orjson.loads(encoded))
    assert orjson.dumps(restored.state()) == encoded
    probe = TaskView("t", "pitch_l1", "pitch", "L1", 20, render_instruction(20, "Pitch:", sheet(rng, 20), "Go."))
    assert restored.context(probe) == adapter.context(probe)
    product = sheet(rng, 21)
    play(adapter, 21, product, HIPSTER)
    play(restored, 21, product, HIPSTER)
    assert orjson.dumps(restored.state()) == orjson.dumps(adapter.state())

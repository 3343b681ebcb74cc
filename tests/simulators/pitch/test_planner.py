"""The scripted writer's decisions from the instruction and the policy it is given."""

from __future__ import annotations

from simulators.domains.pitch import DOMAIN
from simulators.domains.pitch.lexicon import find_cues
from simulators.domains.pitch.planner import policy_weights

INSTRUCTION = """Current timestamp: 7

Product to pitch:
Product: Kestrel Arc (reading lamp)
Facts:
  - a huge user base
  - an inexpensive price tag
  - made with recycled materials
  - packed with features
  - trending right now

Write your pitch."""


def stated(pitch: str) -> set[tuple[str, str]]:
    return {(hit.attribute, hit.value) for hit in find_cues(pitch.replace("Kestrel Arc", ""))}


def test_states_exactly_the_positively_weighted_facts() -> None:
    policy = {"price.low": 2, "features.full": 1, "eco.eco": -1, "buzz.viral": -3, "popularity.many_users": 0}
    call = DOMAIN.next_call(INSTRUCTION, policy, [])
    assert call.name == "finish"
    pitch = str(call.arguments["pitch"])
    assert stated(pitch) == {("price", "low"), ("features", "full")}
    assert 40 <= len(pitch.split()) <= 80


def test_a_later_block_overrides_rule_by_rule() -> None:
    documented = {"price.low": -1, "buzz.viral": 2}
    learned = {"buzz.viral": {"weight": -3}, "eco.eco": {"weight": 1}}
    call = DOMAIN.next_call(INSTRUCTION, {**documented, **learned}, [])
    assert stated(str(call.arguments["pitch"])) == {("eco", "eco")}


def test_foreign_and_malformed_rules_are_ignored() -> None:
    assert policy_weights({"refund.window_days": 30, "price.low": True, "price.mid": "high",
                           "features.full": 1, "eco.eco": {"weight": 2.0}}) == {"features.full": 1.0,
                                                                                  "eco.eco": 2.0}


def test_without_pitch_rules_it_still_finishes_with_a_pitch() -> None:
    call = DOMAIN.next_call(INSTRUCTION, {}, [])
    pitch = str(call.arguments["pitch"])
    assert call.name == "finish" and len(pitch.split()) <= 80
    assert stated(pitch) == {("popularity", "many_users"), ("price", "low"), ("eco", "eco"),
                             ("features", "full"), ("buzz", "viral")}


def test_an_instruction_without_a_sheet_still_finishes() -> None:
    call = DOMAIN.next_call("Write something nice.", {"price.low": 2}, [])
    assert call.name == "finish" and 40 <= len(str(call.arguments["pitch"]).split()) <= 80

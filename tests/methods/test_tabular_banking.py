"""tabular, banking adapter: boundaries, reading requests, exploring decisions, drift, the block."""

from __future__ import annotations

import itertools

import orjson

from methods.tabular.banking import BankingAdapter
from methods.tabular.banking_rules import DRIFT_CONFIRM, Rule, best_threshold, matches
from methods.tabular.banking_units import Unit
from methods.tabular.common import roundest_between
from simulators.policy_block import render_policy_block
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord, Step

ELECTRONICS: dict[str, JSON] = {"applies_to": "card_transaction", "order": 40, "action": "escalate",
                                "reason": "over_limit", "when": {"category_in": ["electronics"], "amount_over": 500.0}}
STANDING: dict[str, JSON] = {"applies_to": "limit_increase", "order": 10, "action": "deny",
                             "reason": "account_standing", "when": {"standing_in": ["recent_chargeback"]}}
DOCUMENTED: dict[str, JSON] = {"txn_limit_electronics": ELECTRONICS, "limit_standing": STANDING}
POLICY_DOC = "# Risk policy manual\n\n" + render_policy_block(DOCUMENTED)
_ids = itertools.count(100_000)


def record(position: int, case: dict[str, JSON], account: dict[str, JSON], decision: tuple[str, dict[str, JSON]],
           reward: float, merchant: dict[str, JSON] | None = None,
           payees: dict[str, dict[str, JSON]] | None = None) -> EpisodeRecord:
    calls: list[tuple[str, dict[str, JSON], str]] = [
        ("read_docs", {"doc": "policy"}, POLICY_DOC),
        ("get_case_details", {"case_id": case["case_id"]}, orjson.dumps(case).decode()),
        ("get_account_details", {"account_id": account["account_id"]}, orjson.dumps(account).decode()),
    ]
    if merchant is not None:
        merchant_id = merchant["merchant_id"]
        calls.append(("get_merchant_details", {"merchant_id": merchant_id}, orjson.dumps(merchant).decode()))
    for payee_id, payee in (payees or {}).items():
        calls.append(("get_payee_details", {"payee_id": payee_id}, orjson.dumps(payee).decode()))
    calls += [(decision[0], decision[1], "done"), ("finish", {}, "Episode finished.")]
    steps = tuple(Step("", "", name, orjson.dumps(arguments).decode(), observation)
                  for name, arguments, observation in calls)
    task = TaskView(f"t{position}", "banking_l1", "banking", "L1", position,
                    f"Current timestamp: {position}\n\nSettle case {case['case_id']}.")
    return EpisodeRecord(task, position, steps, reward, {}, "finish")


def account(verification: str = "verified", standing: str = "good", tenure: int = 5,
            today: float = 100.0) -> dict[str, JSON]:
    return {"account_id": f"ACC-{next(_ids)}", "verification": verification, "standing": standing,
            "tenure_years": tenure, "today_total": today}


def card(position: int, amount: float, category: str, decision: str, reward: float, region: str = "domestic",
         verification: str = "verified", today: float = 100.0) -> EpisodeRecord:
    case_id = f"TXN-{next(_ids)}"
    the_account = account(verification, today=today)
    case: dict[str, JSON] = {"case_id": case_id, "kind": "card_transaction", "account_id": the_account["account_id"],
                             "merchant_id": "MER-001", "amount": amount, "same_day_approved_total": today}
    merchant: dict[str, JSON] = {"merchant_id": "MER-001", "category": category, "region": region}
    return record(position, case, the_account, _call(case_id, decision), reward, merchant=merchant)


def _call(case_id: str, decision: str) -> tuple[str, dict[str, JSON]]:
    if decision == "approve":
        return "approve_case", {"case_id": case_id}
    action, _, reason = decision.partition(":")
    return f"{action}_case", {"case_id": case_id, "reason": reason}


def view() -> TaskView:
    return TaskView("x", "banking_l1", "banking", "L1", 999, "Current timestamp: 999\n\nSettle case TXN-1.")


# ---------------------------------------------------------------------------------------------- boundaries


def test_roundest_between_prefers_round_numbers_near_the_middle() -> None:
    assert roundest_between(64_000, 72_000) == 70_000
    assert roundest_between(60_100, 66_000) == 65_000
    assert roundest_between(60_000, 66_000) == 60_000  # $600 is rounder than $650
    assert roundest_between(24_000, 31_000) == 25_000
    assert roundest_between(12_345, 12_346) == 12_345
    assert roundest_between(500, 500) == 500


def test_best_threshold_keeps_a_documented_boundary_that_still_separates() -> None:
    assert best_threshold([(5, 61_000)], [(4, 48_000)], current=50_000) == 50_000
    # It no longer separates: the boundary moves to the roundest value between the largest negative and
    # the smallest positive.
    assert best_threshold([(5, 71_000), (6, 80_000)], [(7, 61_000), (8, 64_000)], current=50_000) == 70_000
    # Only one side known: stay within a fifth of it.
    assert best_threshold([], [(3, 64_000)], current=None) == 75_000
    assert best_threshold([], [], current=None) is None


def test_newer_labels_win_over_older_ones_they_contradict_once_the_drift_is_confirmed() -> None:
    old_neg = [(1, 60_000), (2, 62_000)]  # approved while the boundary was 650
    new_pos = [(10, 48_000), (12, 52_000), (14, 55_000)]  # refused now
    new_neg = [(11, 40_000), (13, 42_000), (15, 45_000)]
    assert DRIFT_CONFIRM == 6
    assert best_threshold(new_pos, old_neg + new_neg, current=65_000) == 45_000
    # Too few labels after the clash: it is read as structure (another rule explains the positives),
    # and no negative may fire.
    assert best_threshold(new_pos[:1], old_neg + new_neg[:1], current=65_000) == 65_000
    assert best_threshold([(12, 52_000)], [(1, 60_000), (2, 58_000)], current=None) == 70_000


# ---------------------------------------------------------------------------------------------- reading


def test_requests_are_read_from_the_case_its_account_merchant_and_payees() -> None:
    adapter = BankingAdapter()
    the_account = account("basic", tenure=1, today=250.0)
    legs = {"case_id": "TRF-1", "kind": "outbound_transfer", "account_id": the_account["account_id"],
            "legs": [{"leg": 2, "payee_id": "PAY-2", "amount": 900.0},
                     {"leg": 1, "payee_id": "PAY-1", "payee_added_days_ago": 12, "amount": 1200.5}]}
    payees: dict[str, dict[str, JSON]] = {
        "PAY-1": {"payee_id": "PAY-1", "added_days_ago": 12, "restrictions": []},
        "PAY-2": {"payee_id": "PAY-2", "added_days_ago": 400, "restrictions": ["watchlist"]},
    }
    adapter.learn(record(7, legs, the_account, ("execute_leg", {"case_id": "TRF-1", "leg": 2}), 1.0, payees=payees))
    first, second = adapter.units["outbound_transfer"]
    assert (first.amount, first.payee_age, first.flags, first.tenure) == (120_050, 1_200, "", 100)
    assert first.gold == "" and first.excluded == ["approve"]  # alternative 1 could not be approved
    assert (second.amount, second.payee_age, second.flags, second.gold) == (90_000, 40_000, "watchlist", "approve")
    assert second.total == 90_000 + 25_000


# ---------------------------------------------------------------------------------------------- learning


def test_a_documented_boundary_follows_the_scores_upwards() -> None:
    adapter = BankingAdapter()
    for position, amount, decision, reward in [
        (1, 520.0, "escalate:over_limit", 1.0),  # the old boundary, confirmed
        (10, 600.0, "escalate:over_limit", 0.0),  # no longer: tentatively approved
        (11, 560.0, "approve", 1.0), (12, 610.0, "approve", 1.0), (13, 640.0, "approve", 1.0),
        (14, 720.0, "escalate:over_limit", 1.0), (15, 810.0, "escalate:over_limit", 1.0),
    ]:
        adapter.learn(card(position, amount, "electronics", decision, reward))
    rule = adapter.context(view())["txn_limit_electronics"]
    assert rule == {**ELECTRONICS, "order": 40.0, "when": {"category_in": ["electronics"], "amount_over": 700.0}}


def test_an_unexplained_failure_explores_a_fitting_reason_and_a_scored_guess_becomes_a_rule() -> None:
    adapter = BankingAdapter()
    adapter.learn(card(1, 400.0, "gift_cards", "approve", 1.0, verification="verified"))
    adapter.learn(card(2, 100.0, "gift_cards", "approve", 1.0, verification="basic"))
    adapter.learn(card(3, 500.0, "groceries", "approve", 1.0, verification="basic"))
    adapter.learn(card(4, 400.0, "gift_cards", "approve", 0.0, verification="basic"))
    # The guess: basic verification fits `verification_required`; it stays within the guessed request's
    # kind of request (category, region, verification, standing) until a score confirms it.
    block = adapter.context(view())
    assert list(block) == ["learned_card_transaction_deny_verification_required_1"]
    guess = block["learned_card_transaction_deny_verification_required_1"]
    assert guess["when"] == {"category_in": ["gift_cards"], "region_in": ["domestic"], "verification_in": ["basic"],
                             "standing_in": ["good"], "amount_over": 250.0}
    adapter.learn(card(5, 300.0, "gift_cards", "deny:verification_required", 1.0, verification="basic"))
    rule = adapter.context(view())["learned_card_transaction_deny_verification_required_1"]
    assert rule == {"applies_to": "card_transaction", "order": -99.0, "action": "deny",
                    "reason": "verification_required",
                    "when": {"category_in": ["gift_cards"], "verification_in": ["basic"], "amount_over": 250.0}}


def test_a_refuted_guess_moves_on_to_the_next_decision() -> None:
    adapter = BankingAdapter()
    adapter.learn(card(1, 90.0, "dining", "approve", 1.0, verification="basic"))
    adapter.learn(card(2, 300.0, "dining", "approve", 0.0, verification="basic", today=2600.0))
    assert [u.excluded for u in adapter.units["card_transaction"]][-1] == ["approve"]
    assert adapter._label(adapter.units["card_transaction"][-1]) == "deny:verification_required"
    # The guess fails on a similar, riskier request: both move on, to the next reason that fits.
    adapter.learn(card(3, 310.0, "dining", "deny:verification_required", 0.0, verification="basic", today=2700.0))
    labels = [adapter._label(u) for u in adapter.units["card_transaction"]]
    assert labels == ["approve", "escalate:daily_cap", "escalate:daily_cap"]


def test_a_documented_rule_the_scores_contradict_is_switched_off() -> None:
    adapter = BankingAdapter()
    the_account = account(standing="recent_chargeback")
    for position in (1, 2):
        case: dict[str, JSON] = {"case_id": f"LIM-{position}", "kind": "limit_increase",
                                 "account_id": the_account["account_id"], "requested_limit": 2000.0 + position}
        adapter.learn(record(position, case, the_account, _call(f"LIM-{position}", "deny:account_standing"), 0.0))
    case = {"case_id": "LIM-3", "kind": "limit_increase", "account_id": the_account["account_id"],
            "requested_limit": 2100.0}
    adapter.learn(record(3, case, the_account, _call("LIM-3", "approve"), 1.0))
    assert adapter.context(view()) == {"limit_standing": {**STANDING, "enabled": False}}


def test_rules_render_in_the_banking_schema_and_match_like_the_engine() -> None:
    rule = Rule("escalate:new_payee_review", "outbound_transfer", 20.0, {"flags": frozenset({"watchlist"})},
                {"amount": 500_000}, {"payee_age": 3_000})
    assert rule.to_json() == {"applies_to": "outbound_transfer", "order": 20.0, "action": "escalate",
                              "reason": "new_payee_review",
                              "when": {"payee_flag_in": ["watchlist"], "amount_over": 5000.0,
                                       "payee_added_days_under": 30.0}}
    unit = Unit(1, "outbound_transfer", "", "", "verified", "good", "watchlist", 500_001, 0, 500, 2_999)
    assert matches(rule, unit)
    assert not matches(rule, Unit(1, "outbound_transfer", "", "", "verified", "good", "watchlist", 500_000, 0, 500,
                                  2_999))
    assert not matches(rule, Unit(1, "outbound_transfer", "", "", "verified", "good", "", 600_000, 0, 500, 10))
    assert not matches(rule, Unit(1, "outbound_transfer", "", "", "verified", "good", "watchlist", 600_000, 0, 500,
                                  -1))


def test_state_round_trips_to_the_same_context_and_learning() -> None:
    adapter = BankingAdapter()
    for position, amount, decision, reward in [(1, 520.0, "escalate:over_limit", 1.0), (2, 600.0,
                                               "escalate:over_limit", 0.0), (3, 300.0, "approve", 0.0)]:
        adapter.learn(card(position, amount, "electronics", decision, reward))
    encoded = orjson.dumps(adapter.state())
    restored = BankingAdapter()
    restored.load(orjson.loads(encoded))
    assert orjson.dumps(restored.state()) == encoded
    assert restored.context(view()) == adapter.context(view())
    follow_up = card(4, 650.0, "electronics", "approve", 1.0)
    adapter.learn(follow_up)
    restored.learn(follow_up)
    assert orjson.dumps(restored.state()) == orjson.dumps(adapter.state())
    assert restored.context(view()) == adapter.context(view())

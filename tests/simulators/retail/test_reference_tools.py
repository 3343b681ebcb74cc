"""Conformance of the export worlds' retail tools with the reference's (ServeLearnBench at commit
7943e1e), on the hand-written store of `reference_world`.

Each expectation was derived by reading the reference, not by running our code:
- `servelearnbench/domains/retail/config_tools.py`: `make_cancel_tool`, `make_return_tool`,
  `make_exchange_tool`, `make_modify_tool` (their `invoke`), `_eligibility_error`, `_dest_allowed`,
  `_swap_validate`, `_settle`, `make_write_tools`;
- `servelearnbench/domains/retail/policy_config.py`: `get_config` (the stage table);
- `servelearnbench/domains/retail/l1|l2|l3/timeline.py`: `mechanical_config` (the per-scenario flags);
- `servelearnbench/domains/retail/tools/place_order.py` (`PlaceOrder.invoke`, `_new_order_id`),
  `find_user_id_by_name_zip.py`, `get_user_details.py`, `get_order_details.py`,
  `get_product_details.py`;
- `servelearnbench/engine/env.py`: `apply_episode_view` (what an episode sees), `Env.step`
  (an exception becomes `Error: <exception>`).
A refused call must leave the state exactly as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from simulators.domains.retail import DOMAIN
from simulators.domains.retail.reference_tools import reference_handlers
from simulators.domains.retail.store_config import StoreConfig, reference_config, stage_config
from simulators.domains.retail.world import RetailWorld
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, ToolCall
from simulators.session import ToolSession

from .reference_world import BRONZE, GOLD, NO_TIER, SILVER, environment, task

L1, L2, L3 = "retail_l1", "retail_l2", "retail_l3"


def _world(scenario: str, own: str, split: str = "serving") -> RetailWorld:
    world = DOMAIN.new_world(environment(), task(scenario, own, split))
    assert isinstance(world, RetailWorld)
    return world


def _observe(world: RetailWorld, name: str, args: Mapping[str, JSON]) -> str:
    """What the agent reads: the tool's output, or `Error: <message>` (the session's rendering)."""
    try:
        return world.call(name, args)
    except ToolError as exc:
        return f"Error: {exc}"


def _ret(order: str, items: list[str], method: str, reason: str = "defective") -> dict[str, JSON]:
    return {"order_id": order, "item_ids": items, "payment_method_id": method, "reason": reason}


def _swap(order: str, items: list[str], new: list[str], method: str) -> dict[str, JSON]:
    return {"order_id": order, "item_ids": items, "new_item_ids": new, "payment_method_id": method}


CANCEL, RETURN, EXCHANGE, MODIFY, PLACE = ("cancel_pending_order", "return_delivered_order_items",
                                           "exchange_delivered_order_items", "modify_pending_order_items",
                                           "place_order")
NO_MORE = {"reason": "no longer needed"}

REFUSALS: list[tuple[str, str, str, str, dict[str, JSON], str]] = [
    # (case, scenario, the episode's order, tool, arguments, observation)
    ("cancel-unknown-order", L1, "#W0000011", CANCEL, {"order_id": "#W7777777", **NO_MORE}, "Error: order not found"),
    ("cancel-other-episodes-order", L1, "#W0000011", CANCEL, {"order_id": "#W0000001", **NO_MORE},
     "Error: order not found"),
    ("cancel-not-pending", L1, "#W0000005", CANCEL, {"order_id": "#W0000005", **NO_MORE},
     "Error: non-pending order cannot be cancelled"),
    ("cancel-bad-reason", L1, "#W0000011", CANCEL, {"order_id": "#W0000011", "reason": "changed my mind"},
     "Error: invalid reason"),
    ("cancel-bronze-over-cap", L1, "#W0000001", CANCEL, {"order_id": "#W0000001", **NO_MORE},
     "Error: orders with a total above $200 cannot be cancelled for this account (this order: $250.00)"),
    ("cancel-gold-over-cap", L2, "#W0000003", CANCEL, {"order_id": "#W0000003", **NO_MORE},
     "Error: orders with a total above $500 cannot be cancelled for this account (this order: $519.98)"),
    ("cancel-no-tier-is-bronze", L3, "#W0000012", CANCEL, {"order_id": "#W0000012", **NO_MORE},
     "Error: orders with a total above $200 cannot be cancelled for this account (this order: $299.99)"),
    ("return-no-items", L1, "#W0000005", RETURN, _ret("#W0000005", [], "gift_card_b3"),
     "Error: item_ids must not be empty"),
    ("return-unknown-order", L1, "#W0000005", RETURN, _ret("#W7777777", ["1001"], "gift_card_b3"),
     "Error: order not found"),
    ("return-not-delivered", L1, "#W0000011", RETURN, _ret("#W0000011", ["1001"], "gift_card_b3"),
     "Error: non-delivered order cannot be returned"),
    ("return-bad-reason", L2, "#W0000005", RETURN, _ret("#W0000005", ["1001"], "gift_card_b3", "too big"),
     "Error: invalid or missing return reason"),
    ("return-item-twice", L1, "#W0000005", RETURN, _ret("#W0000005", ["1001", "1001"], "gift_card_b3"),
     "Error: some item not found"),
    ("return-item-not-in-order", L1, "#W0000005", RETURN, _ret("#W0000005", ["1002"], "gift_card_b3"),
     "Error: some item not found"),
    ("return-clearance-l2", L2, "#W0000005", RETURN, _ret("#W0000005", ["1003"], "gift_card_b3"),
     "Error: item 1003 is a clearance item (final sale) and cannot be returned"),
    ("return-late-l2", L2, "#W0000006", RETURN, _ret("#W0000006", ["1001"], "gift_card_s2"),
     "Error: the apparel returne window (30 days after delivery) has passed for this order"),
    ("return-late-l3", L3, "#W0000006", RETURN, _ret("#W0000006", ["1001"], "gift_card_s2"),
     "Error: the apparel returne window (30 days after delivery) has passed for this order"),
    ("return-undated-l2", L2, "#W0000009", RETURN, _ret("#W0000009", ["1001"], "gift_card_b3"),
     "Error: the apparel returne window (30 days after delivery) has passed for this order"),
    ("return-to-another-card", L1, "#W0000005", RETURN, _ret("#W0000005", ["1001"], "credit_card_b2"),
     "Error: refund destination not permitted for this account"),
    ("return-to-unknown-method", L1, "#W0000005", RETURN, _ret("#W0000005", ["1001"], "credit_card_x"),
     "Error: refund destination not permitted for this account"),
    ("exchange-no-items", L1, "#W0000005", EXCHANGE, _swap("#W0000005", [], [], "credit_card_b1"),
     "Error: item_ids must not be empty"),
    ("exchange-unknown-order", L1, "#W0000005", EXCHANGE, _swap("#W7777777", ["1001"], ["1002"], "credit_card_b1"),
     "Error: order not found"),
    ("exchange-not-delivered", L1, "#W0000011", EXCHANGE, _swap("#W0000011", ["1001"], ["1002"], "credit_card_b1"),
     "Error: non-delivered order cannot be exchanged"),
    ("exchange-unknown-method", L1, "#W0000005", EXCHANGE, _swap("#W0000005", ["1001"], ["1002"], "paypal_x"),
     "Error: payment method not found"),
    ("exchange-clearance-l1", L1, "#W0000005", EXCHANGE, _swap("#W0000005", ["1003"], ["1001"], "credit_card_b1"),
     "Error: item 1003 is a clearance item (final sale) and cannot be exchanged"),
    ("exchange-late-l1", L1, "#W0000010", EXCHANGE, _swap("#W0000010", ["2001"], ["2002"], "credit_card_g1"),
     "Error: the electronics exchange window (14 days after delivery) has passed for this order"),
    ("exchange-lengths", L1, "#W0000005", EXCHANGE,
     _swap("#W0000005", ["1001"], ["1002", "1005"], "credit_card_b1"),
     "Error: item_ids and new_item_ids must have the same length"),
    ("exchange-item-twice", L1, "#W0000005", EXCHANGE,
     _swap("#W0000005", ["1001", "1001"], ["1002", "1005"], "credit_card_b1"), "Error: some item not found"),
    ("exchange-not-in-catalog", L1, "#W0000005", EXCHANGE, _swap("#W0000005", ["9999"], ["1002"], "credit_card_b1"),
     "Error: some item not found"),
    ("exchange-other-product", L1, "#W0000005", EXCHANGE, _swap("#W0000005", ["1001"], ["2002"], "credit_card_b1"),
     "Error: new item is not a variant of the same product"),
    ("exchange-unavailable", L1, "#W0000005", EXCHANGE, _swap("#W0000005", ["1001"], ["1004"], "credit_card_b1"),
     "Error: new item is not available"),
    ("exchange-to-clearance", L1, "#W0000005", EXCHANGE, _swap("#W0000005", ["1001"], ["1003"], "credit_card_b1"),
     "Error: new item is a clearance item (final sale) and cannot be selected"),
    ("exchange-gift-card-short", L2, "#W0000007", EXCHANGE, _swap("#W0000007", ["2001"], ["2002"], "gift_card_g3"),
     "Error: insufficient gift card balance (balance $15.00 < $49.99)"),
    ("exchange-refund-to-another-card", L1, "#W0000005", EXCHANGE,
     _swap("#W0000005", ["1001"], ["1005"], "credit_card_b2"),
     "Error: refund destination not permitted for this account"),
    ("modify-no-items", L1, "#W0000011", MODIFY, _swap("#W0000011", [], [], "credit_card_b1"),
     "Error: item_ids must not be empty"),
    ("modify-unknown-order", L1, "#W0000011", MODIFY, _swap("#W7777777", ["1001"], ["1002"], "credit_card_b1"),
     "Error: order not found"),
    ("modify-not-pending", L1, "#W0000005", MODIFY, _swap("#W0000005", ["1001"], ["1002"], "credit_card_b1"),
     "Error: only pending orders can be modified"),
    ("modify-unknown-method", L1, "#W0000011", MODIFY, _swap("#W0000011", ["1001"], ["1002"], "paypal_x"),
     "Error: payment method not found"),
    ("modify-another-card", L2, "#W0000011", MODIFY, _swap("#W0000011", ["1001"], ["1001"], "credit_card_b2"),
     "Error: the price difference must be settled via the original payment method or a gift card"),
    ("modify-other-product", L1, "#W0000011", MODIFY, _swap("#W0000011", ["1001"], ["2001"], "credit_card_b1"),
     "Error: new item is not a variant of the same product"),
    ("modify-item-not-in-order", L1, "#W0000011", MODIFY, _swap("#W0000011", ["1002"], ["1005"], "credit_card_b1"),
     "Error: some item not found"),
    ("modify-gift-card-short", L3, "#W0000011", MODIFY, _swap("#W0000011", ["1001"], ["1002"], "gift_card_b3"),
     "Error: insufficient gift card balance (balance $15.00 < $20.00)"),
    ("place-no-items", L1, "#W0000011", PLACE,
     {"user_id": BRONZE, "item_ids": [], "payment_method_id": "credit_card_b1"}, "Error: item_ids must not be empty"),
    ("place-unknown-user", L1, "#W0000011", PLACE,
     {"user_id": "nobody_0000", "item_ids": ["1001"], "payment_method_id": "credit_card_b1"}, "Error: user not found"),
    ("place-unknown-method", L1, "#W0000011", PLACE,
     {"user_id": BRONZE, "item_ids": ["1001"], "payment_method_id": "credit_card_s1"},
     "Error: payment method not found"),
    ("place-unknown-fallback", L1, "#W0000011", PLACE,
     {"user_id": BRONZE, "item_ids": ["1001"], "payment_method_id": "gift_card_b3",
      "fallback_payment_method_id": "credit_card_s1"}, "Error: fallback payment method not found"),
    ("place-gift-card-fallback", L1, "#W0000011", PLACE,
     {"user_id": BRONZE, "item_ids": ["1001"], "payment_method_id": "credit_card_b1",
      "fallback_payment_method_id": "gift_card_b3"}, "Error: fallback payment method cannot be a gift card"),
    ("place-unknown-item", L1, "#W0000011", PLACE,
     {"user_id": BRONZE, "item_ids": ["1001", "9999"], "payment_method_id": "credit_card_b1"},
     "Error: item not found"),
    ("place-unavailable-item", L1, "#W0000011", PLACE,
     {"user_id": BRONZE, "item_ids": ["1004"], "payment_method_id": "credit_card_b1"},
     "Error: item is not available"),
    ("place-gift-card-short", L1, "#W0000008", PLACE,
     {"user_id": SILVER, "item_ids": ["1001"], "payment_method_id": "gift_card_s2"},
     "Error: insufficient gift card balance (balance $40.00 < total $100.00) and no fallback payment method"),
    ("find-user-padded-name", L1, "#W0000011", "find_user_id_by_name_zip",
     {"first_name": "Bea ", "last_name": "Bronze", "zip": "10001"}, "Error: user not found"),
    ("find-user-wrong-zip", L1, "#W0000011", "find_user_id_by_name_zip",
     {"first_name": "Bea", "last_name": "Bronze", "zip": "10002"}, "Error: user not found"),
    ("user-unknown", L1, "#W0000011", "get_user_details", {"user_id": "nobody_0000"}, "Error: user not found"),
    ("order-other-episodes", L1, "#W0000011", "get_order_details", {"order_id": "#W0000005"},
     "Error: order not found"),
    ("product-unknown", L1, "#W0000011", "get_product_details", {"product_id": "999"}, "Error: product not found"),
]


@pytest.mark.parametrize(("scenario", "own", "tool", "args", "observation"),
                         [case[1:] for case in REFUSALS], ids=[case[0] for case in REFUSALS])
def test_a_refused_call_answers_as_the_reference_and_changes_nothing(
        scenario: str, own: str, tool: str, args: dict[str, JSON], observation: str) -> None:
    world = _world(scenario, own)
    before = world.snapshot()
    assert _observe(world, tool, args) == observation
    assert world.snapshot() == before


def _order_after(scenario: str, own: str, tool: str, args: dict[str, JSON]) -> tuple[dict[str, JSON], RetailWorld]:
    world = _world(scenario, own)
    shown = world.call(tool, args)
    order = json.loads(shown)
    assert shown == json.dumps(order)  # printed as the reference prints: json.dumps, its spacing
    assert world.snapshot()["orders"][order["order_id"]] == order
    return order, world


def _balance(world: RetailWorld, user_id: str, method: str) -> float:
    balance: float = world.snapshot()["users"][user_id]["payment_methods"][method]["balance"]
    return balance


def _entries(order: Mapping[str, JSON]) -> list[tuple[str, float, str]]:
    return [(e["transaction_type"], e["amount"], e["payment_method_id"]) for e in order["payment_history"]]


# --------------------------------------------------------------------------------------------- cancel

def test_cancel_refunds_what_each_method_still_has_within_the_tier_cap() -> None:
    order, world = _order_after(L1, "#W0000002", CANCEL, {"order_id": "#W0000002", "reason": "ordered by mistake"})
    assert order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert _entries(order)[2:] == [("refund", 200.0, "credit_card_s1"), ("refund", 50.0, "gift_card_s2")]
    assert _balance(world, SILVER, "gift_card_s2") == 90.0  # silver cap $300 >= $250
    order, _ = _order_after(L2, "#W0000004", CANCEL, {"order_id": "#W0000004", **NO_MORE})
    assert _entries(order)[2:] == [("refund", 489.98, "credit_card_g1")]  # net of the earlier $30 refund
    order, world = _order_after(L3, "#W0000013", CANCEL, {"order_id": "#W0000013", **NO_MORE})
    assert _entries(order)[3:] == [("refund", 60.0, "credit_card_s1")]  # the gift card has nothing left in it
    assert _balance(world, SILVER, "gift_card_s2") == 40.0


def test_any_order_the_episode_sees_can_be_cancelled() -> None:
    """The reference checks that the order exists in the episode's view (base orders included), not whose
    it is."""
    order, world = _order_after(L1, "#W0000011", CANCEL, {"order_id": "#W0000099", **NO_MORE})
    assert order["user_id"] == GOLD and order["status"] == "cancelled"
    assert world.snapshot()["orders"]["#W0000011"]["status"] == "pending"


# --------------------------------------------------------------------------------------------- return

@pytest.mark.parametrize(("scenario", "own", "items", "method", "user", "refund"), [
    (L1, "#W0000005", ["1001", "3001"], "credit_card_b1", BRONZE, 123.25),  # 145 x 0.85, original method
    (L1, "#W0000006", ["1001"], "credit_card_s1", SILVER, 90.0),  # 100 x 0.90, past the window: L1 permissive
    (L2, "#W0000007", ["2001"], "gift_card_g3", GOLD, 142.5),  # 150 x 0.95 to a gift card of a split order
    (L1, "#W0000005", ["1003"], "gift_card_b3", BRONZE, 51.0),  # clearance: L1 permissive
    (L3, "#W0000005", ["1003"], "gift_card_b3", BRONZE, 51.0),  # clearance: L3 permissive
])
def test_a_return_refunds_the_price_less_the_tiers_fee(scenario: str, own: str, items: list[str], method: str,
                                                        user: str, refund: float) -> None:
    order, world = _order_after(scenario, own, RETURN, _ret(own, items, method, "no longer needed"))
    assert order["status"] == "return requested" and order["return_items"] == sorted(items)
    assert order["return_reason"] == "no longer needed" and order["return_refund_amount"] == refund
    assert "return_payment_method_id" not in order  # the reference does not record the destination
    assert _entries(order)[-1] == ("refund", refund, method)
    if method.startswith("gift_card"):
        before = environment().world["users"][user]["payment_methods"][method]["balance"]
        assert _balance(world, user, method) == round(before + refund, 2)


def test_l2_splits_a_card_refund_of_a_split_order_in_proportion() -> None:
    args = _ret("#W0000007", ["2001", "3001"], "credit_card_g1")
    order, world = _order_after(L2, "#W0000007", RETURN, args)  # 195 x 0.95 = 185.25 over 150 + 45 paid
    assert order["return_refund_amount"] == 185.25
    assert _entries(order)[2:] == [("refund", 142.5, "credit_card_g1"), ("refund", 42.75, "gift_card_g3")]
    assert _balance(world, GOLD, "gift_card_g3") == 57.75
    order, _ = _order_after(L1, "#W0000007", RETURN, args)  # L1 has no split refunds
    assert _entries(order)[2:] == [("refund", 185.25, "credit_card_g1")]


# ------------------------------------------------------------------------------------------- exchange

def test_an_exchange_settles_the_difference_and_records_both_sides() -> None:
    order, _ = _order_after(L1, "#W0000005", EXCHANGE, _swap("#W0000005", ["1001"], ["1002"], "credit_card_b2"))
    assert _entries(order)[1:] == [("payment", 20.0, "credit_card_b2")]  # any method on file pays an upcharge
    assert (order["status"], order["exchange_items"], order["exchange_new_items"]) == (
        "exchange requested", ["1001"], ["1002"])
    assert (order["exchange_payment_method_id"], order["exchange_price_difference"]) == ("credit_card_b2", 20.0)
    order, world = _order_after(L2, "#W0000005", EXCHANGE, _swap("#W0000005", ["1001"], ["1005"], "gift_card_b3"))
    assert _entries(order)[1:] == [("refund", 10.0, "gift_card_b3")] and order["exchange_price_difference"] == -10.0
    assert _balance(world, BRONZE, "gift_card_b3") == 25.0
    order, _ = _order_after(L3, "#W0000005", EXCHANGE, _swap("#W0000005", ["1001"], ["1001"], "credit_card_b1"))
    assert len(order["payment_history"]) == 1 and order["exchange_price_difference"] == 0.0


# --------------------------------------------------------------------------------------------- modify

def test_a_modification_swaps_in_place_and_l2_l3_record_it() -> None:
    order, _ = _order_after(L1, "#W0000011", MODIFY, _swap("#W0000011", ["1001"], ["1002"], "credit_card_b1"))
    assert order["items"] == [{"name": "Jacket", "product_id": "100", "item_id": "1002", "price": 120.0,
                               "options": {"v": "2"}}]
    assert _entries(order)[1:] == [("payment", 20.0, "credit_card_b1")] and "modification_history" not in order
    args = _swap("#W0000003", ["2002", "2002"], ["2001", "2001"], "credit_card_g1")
    for scenario in (L2, L3):
        order, _ = _order_after(scenario, "#W0000003", MODIFY, args)
        assert [item["item_id"] for item in order["items"]] == ["2001", "2001", "1002"]  # each occurrence once
        assert _entries(order)[1:] == [("refund", 99.98, "credit_card_g1")]
        assert order["modification_history"] == [{"item_id": "2002", "new_item_id": "2001"}] * 2
    order, world = _order_after(L2, "#W0000008", MODIFY, _swap("#W0000008", ["1001"], ["1005"], "gift_card_s2"))
    assert _entries(order)[2:] == [("refund", 10.0, "gift_card_s2")]  # split-paid orders are modifiable
    assert _balance(world, SILVER, "gift_card_s2") == 50.0


# ------------------------------------------------------------------------------------------ place order

def test_place_order_pays_with_a_gift_card_and_its_fallback() -> None:
    order, world = _order_after(L1, "#W0000008", PLACE,
                                {"user_id": SILVER, "item_ids": ["3002"], "payment_method_id": "gift_card_s2"})
    assert order["order_id"] == "#W9000002"  # 9000000 + the two orders the episode sees
    assert (order["status"], order["placed_at"], order["user_id"]) == ("pending", "2026-07-15", SILVER)
    assert _entries(order) == [("payment", 32.5, "gift_card_s2")] and _balance(world, SILVER, "gift_card_s2") == 7.5
    assert world.snapshot()["users"][SILVER]["orders"][-1] == "#W9000002"
    order, world = _order_after(L2, "#W0000008", PLACE,
                                {"user_id": SILVER, "item_ids": ["1001"], "payment_method_id": "gift_card_s2",
                                 "fallback_payment_method_id": "credit_card_s1"})
    assert _entries(order) == [("payment", 40.0, "gift_card_s2"), ("payment", 60.0, "credit_card_s1")]
    assert _balance(world, SILVER, "gift_card_s2") == 0.0
    order, world = _order_after(L1, "#W0000011", PLACE,  # an empty gift card: the fallback pays it all
                                {"user_id": GOLD, "item_ids": ["3002"], "payment_method_id": "gift_card_g4",
                                 "fallback_payment_method_id": "credit_card_g1"})
    assert _entries(order) == [("payment", 32.5, "credit_card_g1")] and _balance(world, GOLD, "gift_card_g4") == 0.0
    order, _ = _order_after(L3, "#W0000011", PLACE,  # for any customer, as the reference allows
                            {"user_id": GOLD, "item_ids": ["3001", "2001"], "payment_method_id": "credit_card_g1"})
    assert _entries(order) == [("payment", 195.0, "credit_card_g1")] and order["user_id"] == GOLD


# ---------------------------------------------------------------------------------------------- reads

def test_reads_show_every_customer_and_only_the_episodes_orders() -> None:
    world = _world(L1, "#W0000011")
    found = world.call("find_user_id_by_name_zip", {"first_name": "bea", "last_name": "BRONZE", "zip": "10001"})
    assert found == BRONZE  # the bare id, names compared case-blind
    shown = world.call("get_user_details", {"user_id": BRONZE})
    assert json.loads(shown)["orders"] == ["#W0000011"] and shown == json.dumps(json.loads(shown))
    assert json.loads(world.call("get_user_details", {"user_id": NO_TIER}))["orders"] == []
    assert json.loads(world.call("get_order_details", {"order_id": "#W0000099"}))["user_id"] == GOLD
    mugs = environment().world["products"]["300"]
    assert world.call("get_product_details", {"product_id": "300"}) == json.dumps(mugs)


def test_a_world_that_declares_mechanics_keeps_the_built_in_tools() -> None:
    built_in = environment()
    built_in.world["_mechanics"] = {}  # type: ignore[index]
    world = DOMAIN.new_world(built_in, task(L1, "#W0000001"))
    assert isinstance(world, RetailWorld)
    cancelled = json.loads(world.call(CANCEL, {"order_id": "#W0000001", **NO_MORE}))
    assert cancelled["status"] == "cancelled"  # the built-in tools leave caps to the rules and the grade


# --------------------------------------------------------------------------------------------- config

def test_the_stage_table_and_the_scenarios_flags() -> None:
    s0, s3, s4 = stage_config(0), stage_config(3), stage_config(4)
    assert not s0.gift_cards and not s0.returns_offered and s0.cancel_max_total is None and s0.modify_offered
    assert stage_config(1).gift_cards and not stage_config(2).returns_offered
    assert s3.return_fee == {"bronze": 0.15, "silver": 0.10, "gold": 0.05} and s3.refund_original_tiers == ("gold",)
    assert s3.return_window_days == {"apparel": 30, "electronics": 14, "home": 30} and not s3.exchanges_offered
    assert s4.exchanges_offered and s4.cancel_max_total == {"bronze": 200.0, "silver": 300.0, "gold": 500.0}
    flags = ("clearance_returnable", "window_returnable", "split_refund_proportional", "record_modifications")
    table = {name: tuple(getattr(reference_config(name), flag) for flag in flags) for name in (L1, L2, L3)}
    assert table == {L1: (True, True, False, False), L2: (False, False, True, True), L3: (True, False, True, True)}
    for name in (L1, L2, L3):
        config = reference_config(name)
        assert config is not None and config.refund_original_tiers == ("bronze", "silver", "gold")
        assert config.exchange_any_method
    assert reference_config("banking_l1") is None
    assert set(reference_handlers(s0)) == {"find_user_id_by_name_zip", "get_user_details", "get_order_details",
                                           "get_product_details", CANCEL, PLACE, MODIFY}


def _stage_world(config: StoreConfig, own: str) -> RetailWorld:
    world = _world(L1, own)
    return RetailWorld(world.state, reference_handlers(config), reference=True)


def test_stage_four_without_the_mechanical_flags_gates_refunds_and_upcharges_by_tier() -> None:
    """`_dest_allowed` with `refund_original_tiers == ["gold"]`, and the exchange's original-method rule
    when `exchange_any_method` is off."""
    s4 = stage_config(4)
    bronze = _stage_world(s4, "#W0000005")
    assert _observe(bronze, RETURN, _ret("#W0000005", ["1001"], "credit_card_b1")) == (
        "Error: refund destination not permitted for this account")
    assert _observe(bronze, EXCHANGE, _swap("#W0000005", ["1001"], ["1002"], "credit_card_b2")) == (
        "Error: the price difference must be paid via the original payment method or a gift card")
    gold = _stage_world(s4, "#W0000007")
    assert json.loads(_observe(gold, RETURN, _ret("#W0000007", ["2001"], "credit_card_g1")))[
        "return_refund_amount"] == 142.5


def test_an_unexpected_record_fails_as_the_reference_shows_an_exception() -> None:
    """`Env.step` shows a tool's exception as `Error: <exception>`: a category without a window is a
    KeyError there."""
    env = environment()
    # A new products map: the reference world's PRODUCTS is shared by every test of this worker.
    products = env.world["products"]
    env.world["products"] = {**products, "300": {**products["300"], "category": "garden"}}  # type: ignore[index]
    world = DOMAIN.new_world(env, task(L2, "#W0000005"))
    assert _observe(world, RETURN, _ret("#W0000005", ["3001"], "gift_card_b3")) == "Error: 'garden'"  # type: ignore[arg-type]


def test_test_episodes_lose_serving_only_variants_in_every_tool() -> None:
    env = environment()
    env.world["_episode_view"] = {"base_orders": ["#W0000099"], "serving_only_variants": ["1002"]}  # type: ignore[index]
    world = DOMAIN.new_world(env, task(L1, "#W0000011", split="test"))
    assert isinstance(world, RetailWorld)
    assert "1002" not in json.loads(world.call("get_product_details", {"product_id": "100"}))["variants"]
    assert _observe(world, MODIFY, _swap("#W0000011", ["1001"], ["1002"], "credit_card_b1")) == (
        "Error: new item is not a variant of the same product")
    assert _observe(world, PLACE, {"user_id": BRONZE, "item_ids": ["1002"], "payment_method_id": "credit_card_b1"}) == (
        "Error: item not found")



TOOLS = tuple(json.loads((Path(__file__).parents[2] / "fixtures" / "official" / "environments" / "retail_l1"
                          / "tools.json").read_text()))


@pytest.mark.parametrize(("tool", "args", "observation"), [
    (CANCEL, {"order_id": "#W0000011"},
     "Error: make_cancel_tool.<locals>.CancelPendingOrderCfg.invoke() missing 1 required positional argument: "
     "'reason'"),
    (RETURN, {"order_id": "#W0000011"},
     "Error: make_return_tool.<locals>.ReturnDeliveredOrderItemsCfg.invoke() missing 3 required positional "
     "arguments: 'item_ids', 'payment_method_id', and 'reason'"),
    (PLACE, {"user_id": BRONZE, "item_ids": ["1001"], "payment_method_id": "credit_card_b1", "note": "hi"},
     "Error: PlaceOrder.invoke() got an unexpected keyword argument 'note'"),
    ("get_order_details", {"order_id": ["#W0000011"]}, "Error: unhashable type: 'list'"),
    (MODIFY, _swap("#W0000011", [], [], "credit_card_b1"), "Error: item_ids must not be empty"),
    (MODIFY, _swap("#W0000011", ["1001"], ["1002"], {"id": "credit_card_b1"}),  # type: ignore[arg-type]
     "Error: unhashable type: 'dict'"),
])
def test_arguments_reach_the_tool_unchecked_and_fail_as_in_python(tool: str, args: dict[str, JSON],
                                                                  observation: str) -> None:
    """The reference checks no schema before a tool runs (`engine/env.py` `Env.step` calls
    `invoke(data=..., **kwargs)`): a call that does not bind is Python's TypeError naming the tool's
    method, an empty list reaches the tool's own check."""
    env = environment()
    world = DOMAIN.new_world(env, task(L1, "#W0000011"))
    session = ToolSession(ScenarioEnvironment("", TOOLS, {}, env.world, ()), world)
    assert session.execute(ToolCall("1", tool, json.dumps(args))).observation == observation

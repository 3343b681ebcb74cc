"""tabular, retail adapter: reading requests, pinning refused cells, trying codes, drift, the block."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from methods.tabular.retail import RetailAdapter
from methods.tabular.retail_evidence import leg_facts
from simulators.domains.retail.parsing import ParsedLeg, parse_instruction
from simulators.policy_block import render_policy_block
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord, Step

DOCUMENTED: dict[str, JSON] = {
    "cancel.status": {"op": "cancel", "attribute": "status", "deny": ["processed", "delivered"],
                      "reason": "invalid_status"},
    "return.item_class": {"op": "return", "attribute": "item_class", "deny": ["clearance"], "reason": "final_sale"},
}
POLICY_DOC = "# Policy\n\n" + render_policy_block(DOCUMENTED)


def user(membership: str = "gold") -> dict[str, JSON]:
    return {"user_id": "ana_lee_1", "membership": membership,
            "payment_methods": {"credit_card_1111111": {"source": "credit_card"},
                                "paypal_2222222": {"source": "paypal"},
                                "gift_card_3333333": {"source": "gift_card", "balance": 500.0}}}


def order(order_id: str, status: str, paid: Sequence[tuple[str, float]], items: Sequence[tuple[str, str]],
          state: str = "CA") -> dict[str, JSON]:
    return {"order_id": order_id, "status": status, "address": {"state": state},
            "items": [{"item_id": item, "product_id": product, "price": 10.0} for item, product in items],
            "payment_history": [{"transaction_type": "payment", "amount": amount, "payment_method_id": method}
                                for method, amount in paid]}


PRODUCTS: dict[str, dict[str, JSON]] = {
    "p_lamp": {"product_id": "p_lamp", "category": "home",
               "variants": {"1000000001": {"clearance": False}, "1000000002": {"clearance": True}}},
    "p_phone": {"product_id": "p_phone", "category": "electronics",
                "variants": {"2000000001": {"clearance": False}, "2000000002": {"clearance": False}}},
}


def episode(position: int, body: str, the_order: Mapping[str, JSON], finish: dict[str, JSON], reward: float,
            write: tuple[str, dict[str, JSON]] | None = None, the_user: Mapping[str, JSON] | None = None,
            ) -> EpisodeRecord:
    """A record the way the scripted agent leaves it: documents, lookups, maybe a write, finish."""
    calls: list[tuple[str, dict[str, JSON], str]] = [
        ("read_docs", {"doc": "policy"}, POLICY_DOC),
        ("find_user_id_by_name_zip", {"first_name": "Ana", "last_name": "Lee", "zip": "90001"}, "ana_lee_1"),
        ("get_user_details", {"user_id": "ana_lee_1"}, orjson.dumps(the_user or user()).decode()),
        ("get_order_details", {"order_id": the_order["order_id"]}, orjson.dumps(the_order).decode()),
    ]
    for item in the_order["items"]:
        product = PRODUCTS[item["product_id"]]
        calls.append(("get_product_details", {"product_id": item["product_id"]}, orjson.dumps(product).decode()))
    if write is not None:
        calls.append((write[0], write[1], orjson.dumps(the_order).decode()))
    calls.append(("finish", finish, "Episode finished."))
    steps = tuple(Step("", "", name, orjson.dumps(arguments).decode(), observation)
                  for name, arguments, observation in calls)
    instruction = f"Current timestamp: {position}\n\nCustomer: Ana Lee (zip 90001) writes:\n\"{body}\""
    task = TaskView(f"t{position}", "retail_l1", "retail", "L1", position, instruction)
    return EpisodeRecord(task, position, steps, reward, finish, "finish")


def cancel(position: int, order_id: str, paid_with: str, reward: float, carried: bool = True,
           code: str = "", category_item: tuple[str, str] = ("1000000001", "p_lamp")) -> EpisodeRecord:
    the_order = order(order_id, "pending", [(paid_with, 50.0)], [category_item])
    body = f"Please cancel order {order_id}; I no longer need it."
    if carried:
        return episode(position, body, the_order, {}, reward,
                       ("cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"}))
    return episode(position, body, the_order, {"decision": "refuse", "reason": code}, reward)


def ret(position: int, order_id: str, item: str, reward: float, carried: bool, code: str = "") -> EpisodeRecord:
    the_order = order(order_id, "delivered", [("credit_card_1111111", 20.0)], [(item, "p_lamp")])
    body = (f"I want to return the Lamp (item {item}) from order {order_id} because it's defective. "
            "Please refund my credit card (credit_card_1111111).")
    if carried:
        arguments: dict[str, JSON] = {"order_id": order_id, "item_ids": [item],
                                      "payment_method_id": "credit_card_1111111", "reason": "defective"}
        return episode(position, body, the_order, {}, reward, ("return_delivered_order_items", arguments))
    return episode(position, body, the_order, {"decision": "refuse", "reason": code}, reward)


def view(position: int) -> TaskView:
    return TaskView("x", "retail_l1", "retail", "L1", position, f"Current timestamp: {position}\n\nhi")


# ---------------------------------------------------------------------------------------------- reading


def test_the_legs_come_from_the_scripted_agents_parser() -> None:
    """The adapter reads requests with `parse_instruction`; the fields it relies on, per leg."""
    parsed = parse_instruction(
        'Customer: Ana Lee (zip 90001) writes:\n"Please exchange the Phone (item 2000000001) for the black '
        'version (item 2000000002) from my delivered order #W1234567; settle the difference with my PayPal '
        'account (paypal_2222222). If you can\'t do that, I\'ll return the Phone (item 2000000001) instead, '
        'reason: wrong item, with the refund to my gift card (gift_card_3333333)."')
    assert parsed is not None and not parsed.quote
    assert [leg.op for leg in parsed.legs] == ["exchange", "return"]
    assert parsed.legs[0] == ParsedLeg("exchange", "#W1234567", ("2000000001", "2000000002"), "paypal_2222222", "",
                                       {})
    assert parsed.legs[1].reason == "wrong item" and parsed.legs[1].payment_method_id == "gift_card_3333333"
    parsed = parse_instruction('Customer: A B (zip 90001) writes:\n"How much would I get back if I returned the '
                               'Lamp (item 1000000001) from order #W7654321 (defective) with the refund to my '
                               'credit card (credit_card_1111111)? If it can\'t be returned, the answer is 0."')
    assert parsed is not None and parsed.quote and [leg.op for leg in parsed.legs] == ["return"]
    parsed = parse_instruction('Customer: A B (zip 90001) writes:\n"Please ship order #W7654321 to 12 Oak St, '
                               'Apt 4, Austin, TX 73301 instead."')
    assert parsed is not None and parsed.legs[0].op == "modify_address"
    the_order = order("#W7654321", "pending", [("paypal_2222222", 9.0)], [("1000000001", "p_lamp")])
    facts = leg_facts(parsed.legs[0], user(), the_order, PRODUCTS)
    assert facts is not None and facts["new_state"] == {"TX"} and facts["ship_state"] == {"CA"}
    assert parse_instruction("Refund order #W1 please.") is None


def test_leg_facts_follow_the_schema() -> None:
    split = order("#W1", "pending", [("credit_card_1111111", 5.0), ("gift_card_3333333", 5.0)],
                  [("1000000002", "p_lamp"), ("2000000001", "p_phone")], state="NY")
    facts = leg_facts(ParsedLeg("cancel", "#W1", (), "", "ordered by mistake", {}), user("silver"), split, PRODUCTS)
    expected = {"status": {"pending"}, "payment": {"split"}, "membership": {"silver"}, "ship_state": {"NY"},
                "category": {"home", "electronics"}, "item_class": {"clearance", "regular"},
                "reason": {"ordered by mistake"}}
    assert facts == {attribute: frozenset(values) for attribute, values in expected.items()}
    paid = order("#W2", "delivered", [("paypal_2222222", 9.0)], [("1000000001", "p_lamp")])
    to_first = leg_facts(ParsedLeg("return", "#W2", ("1000000001",), "paypal_2222222", "defective", {}), user(), paid,
                         PRODUCTS)
    to_other = leg_facts(ParsedLeg("return", "#W2", ("1000000001",), "credit_card_1111111", "defective", {}), user(),
                         paid, PRODUCTS)
    to_gift = leg_facts(ParsedLeg("return", "#W2", ("1000000001",), "gift_card_3333333", "defective", {}), user(), paid,
                        PRODUCTS)
    assert to_first is not None and to_first["refund_to"] == {"original_method"}
    assert to_other is not None and to_other["refund_to"] == {"other_method"}
    assert to_gift is not None and to_gift["refund_to"] == {"gift_card"} and to_gift["category"] == {"home"}
    missing = leg_facts(ParsedLeg("return", "#W2", ("9999999999",), "paypal_2222222", "defective", {}), user(), paid,
                        PRODUCTS)
    assert missing is None  # the world refuses an item not in the order, not the policy


# ---------------------------------------------------------------------------------------------- learning


def learned(adapter: RetailAdapter, *records: EpisodeRecord) -> dict[str, JSON]:
    for record in records:
        adapter.learn(record)
    return adapter.context(view(999))


def test_no_evidence_writes_nothing_and_documented_refusals_that_score_write_nothing() -> None:
    adapter = RetailAdapter()
    assert learned(adapter) == {}
    # A documented refusal that scores 100 confirms the documents: still nothing to override.
    the_order = order("#W1000001", "processed", [("paypal_2222222", 5.0)], [("1000000001", "p_lamp")])
    refusal = episode(1, "Please cancel order #W1000001; I no longer need it.", the_order,
                      {"decision": "refuse", "reason": "invalid_status"}, 1.0)
    assert learned(adapter, refusal) == {}


def test_a_failure_is_pinned_on_the_one_cell_later_successes_leave_unexplained() -> None:
    adapter = RetailAdapter()
    block = learned(adapter,
                    cancel(1, "#W1000001", "gift_card_3333333", 0.0),
                    cancel(2, "#W1000002", "paypal_2222222", 1.0),
                    cancel(3, "#W1000003", "credit_card_1111111", 1.0))
    assert block == {"cancel.payment": {"op": "cancel", "attribute": "payment", "deny": ["gift_card"],
                                        "reason": "service_not_offered"}}
    assert adapter.cells["cancel|payment|gift_card"].strong


def test_a_failed_code_on_a_pinned_cell_tries_the_next_code_then_keeps_the_one_that_scores() -> None:
    adapter = RetailAdapter()
    learned(adapter, cancel(1, "#W1000001", "gift_card_3333333", 0.0), cancel(2, "#W1000002", "paypal_2222222", 1.0))
    assert adapter.code("cancel|payment|gift_card") == "service_not_offered"
    block = learned(adapter, cancel(3, "#W1000003", "gift_card_3333333", 0.0, carried=False,
                                    code="service_not_offered"))
    assert adapter.denied("cancel|payment|gift_card")
    assert block["cancel.payment"] == {"op": "cancel", "attribute": "payment", "deny": ["gift_card"],
                                       "reason": "invalid_status"}
    learned(adapter, cancel(4, "#W1000004", "gift_card_3333333", 1.0, carried=False, code="invalid_status"))
    assert adapter.code("cancel|payment|gift_card") == "invalid_status"


def test_a_documented_refusal_that_fails_is_tried_as_allowed_and_confirmed() -> None:
    adapter = RetailAdapter()
    block = learned(adapter, ret(1, "#W2000001", "1000000002", 0.0, carried=False, code="final_sale"))
    assert block == {"return.item_class": {"op": "return", "attribute": "item_class", "deny": [],
                                           "reason": "final_sale"}}
    learned(adapter, ret(2, "#W2000002", "1000000002", 1.0, carried=True))
    assert not adapter.denied("return|item_class|clearance")


def test_drift_newer_evidence_reopens_a_cell_in_either_direction() -> None:
    adapter = RetailAdapter()
    learned(adapter, cancel(1, "#W1000001", "gift_card_3333333", 0.0), cancel(2, "#W1000002", "paypal_2222222", 1.0))
    assert adapter.denied("cancel|payment|gift_card")
    # The refusal stops scoring: one other code is tried, then the cell is tried as allowed, and allowed
    # it scores, so it stays allowed.
    learned(adapter, cancel(3, "#W1000003", "gift_card_3333333", 0.0, carried=False, code="service_not_offered"))
    assert adapter.denied("cancel|payment|gift_card")
    learned(adapter, cancel(4, "#W1000004", "gift_card_3333333", 0.0, carried=False, code="invalid_status"))
    assert not adapter.denied("cancel|payment|gift_card")
    block = learned(adapter, cancel(5, "#W1000005", "gift_card_3333333", 1.0))
    assert block == {}
    # ... and later the restriction comes back (a reversal): pinned again by a new failure.
    learned(adapter, cancel(6, "#W1000006", "gift_card_3333333", 0.0), cancel(7, "#W1000007", "paypal_2222222", 1.0))
    assert adapter.denied("cancel|payment|gift_card")


def test_a_zero_quote_that_fails_means_the_request_is_allowed() -> None:
    adapter = RetailAdapter()
    the_order = order("#W3000001", "delivered", [("credit_card_1111111", 20.0)], [("1000000002", "p_lamp")])
    quote = episode(1, "How much would I get back if I returned the Lamp (item 1000000002) from order #W3000001 "
                       "(defective) with the refund to my credit card (credit_card_1111111)? If it can't be "
                       "returned, the answer is 0.", the_order, {"answer": 0.0}, 0.0)
    block = learned(adapter, quote)
    assert block["return.item_class"] == {"op": "return", "attribute": "item_class", "deny": [],
                                          "reason": "final_sale"}
    assert adapter.cells["return|item_class|clearance"].ok == 1


def test_state_round_trips_to_the_same_context_and_learning() -> None:
    adapter = RetailAdapter()
    learned(adapter, cancel(1, "#W1000001", "gift_card_3333333", 0.0), cancel(2, "#W1000002", "paypal_2222222", 1.0),
            ret(3, "#W2000001", "1000000002", 0.0, carried=False, code="final_sale"))
    encoded = orjson.dumps(adapter.state())
    restored = RetailAdapter()
    restored.load(orjson.loads(encoded))
    assert orjson.dumps(restored.state()) == encoded
    assert restored.context(view(9)) == adapter.context(view(9))
    for each in (adapter, restored):
        each.learn(cancel(4, "#W1000004", "gift_card_3333333", 0.0, carried=False, code="service_not_offered"))
    assert orjson.dumps(restored.state()) == orjson.dumps(adapter.state())

"""The retail world's tools: scoping, copy-on-write, money, mechanics, and cost per episode."""

from __future__ import annotations

from collections.abc import Mapping

import orjson
import pytest

from simulators.domains.retail import DOMAIN
from simulators.domains.retail.world import WRITE_TOOLS, RetailWorld
from simulators.errors import ToolError
from simulators.protocol import JSON, Evaluator, Scenario, ScenarioEnvironment, Task

from .helpers import gold_finish

USER = "ana_sol_0001"


def _environment(**extra: JSON) -> ScenarioEnvironment:
    products = {"1111111111": {"category": "home", "name": "Lamp", "product_id": "1111111111", "variants": {
        "2000000001": {"available": True, "clearance": False, "item_id": "2000000001", "options": {"c": "red"},
                       "price": 50.0},
        "2000000002": {"available": True, "clearance": False, "item_id": "2000000002", "options": {"c": "blue"},
                       "price": 80.0},
        "2000000003": {"available": False, "clearance": False, "item_id": "2000000003", "options": {"c": "tan"},
                       "price": 60.0},
        "2000000004": {"available": True, "clearance": True, "item_id": "2000000004", "options": {"c": "gold"},
                       "price": 20.0}}}}
    users = {
        USER: {"user_id": USER, "name": {"first_name": "Ana", "last_name": "Sol"}, "membership": "gold",
               "address": {"address1": "1 A St", "address2": "Apt 1", "city": "Austin", "country": "USA",
                           "state": "TX", "zip": "78701"},
               "payment_methods": {"credit_card_1000001": {"id": "credit_card_1000001", "source": "credit_card"},
                                   "gift_card_1000002": {"id": "gift_card_1000002", "source": "gift_card",
                                                         "balance": 10.0},
                                   "paypal_1000003": {"id": "paypal_1000003", "source": "paypal"}},
               "orders": ["#W1000001", "#W1000002"]},
        "bo_rey_0002": {"user_id": "bo_rey_0002", "name": {"first_name": "Bo", "last_name": "Rey"},
                        "membership": "bronze", "payment_methods": {},
                        "address": {"zip": "10001", "state": "NY"}, "orders": ["#W1000003"]},
    }

    def order(order_id: str, user: str, status: str, payments: list[tuple[str, float]]) -> dict[str, JSON]:
        return {"order_id": order_id, "user_id": user, "status": status, "address": {"state": "TX"},
                "items": [{"name": "Lamp", "product_id": "1111111111", "item_id": "2000000001", "price": 50.0,
                           "options": {"c": "red"}}],
                "payment_history": [{"transaction_type": "payment", "amount": a, "payment_method_id": m}
                                    for m, a in payments]}

    orders = {"#W1000001": order("#W1000001", USER, "pending", [("credit_card_1000001", 40.0),
                                                                   ("gift_card_1000002", 10.0)]),
              "#W1000002": order("#W1000002", USER, "delivered", [("credit_card_1000001", 50.0)]),
              "#W1000003": order("#W1000003", "bo_rey_0002", "pending", [("credit_card_9", 50.0)])}
    # a built-in world (it declares `_mechanics`; an empty table means the default statuses): a world
    # without it is the public export's and runs the reference's tools (test_reference_tools.py)
    world = {"users": users, "orders": orders, "products": products, "_mechanics": {}, **extra}
    return ScenarioEnvironment("", (), {}, world, ())


def _task(order_id: str, split: str = "serving", instruction: str | None = None,
          metadata: Mapping[str, JSON] | None = None) -> Task:
    text = instruction if instruction is not None else f"Current timestamp: 1\n\nAbout {order_id}."
    return Task("t", "retail_l1", "retail", "L1", split, 0, 1, "fully_specified", text,
                Evaluator("general", "f", (), None, metadata or {}))


def _world(environment: ScenarioEnvironment, order_id: str, **kwargs: JSON) -> RetailWorld:
    world = DOMAIN.new_world(environment, _task(order_id, **kwargs))
    assert isinstance(world, RetailWorld)
    return world


def _call(world: RetailWorld, name: str, **arguments: JSON) -> dict[str, JSON]:
    value = orjson.loads(world.call(name, arguments))
    assert isinstance(value, dict)
    return value


def test_scope_comes_from_the_instruction_or_the_metadata() -> None:
    environment = _environment()
    world = _world(environment, "#W1000001")
    assert _call(world, "get_order_details", order_id="#W1000001")["status"] == "pending"
    for hidden in ("#W1000002", "#W1000003"):
        with pytest.raises(ToolError):
            world.call("get_order_details", {"order_id": hidden})
    assert _call(world, "get_user_details", user_id=USER)["orders"] == ["#W1000001"]
    for other in ({"user_id": "bo_rey_0002"}, {"first_name": "Bo", "last_name": "Rey", "zip": "10001"}):
        with pytest.raises(ToolError, match="user not found"):  # not a customer this episode serves
            world.call("get_user_details" if "user_id" in other else "find_user_id_by_name_zip", other)
    fallback = DOMAIN.new_world(environment, _task("x", instruction="Order W9999999 please",
                                                   metadata={"order_id": "#W1000002"}))
    assert '"delivered"' in fallback.call("get_order_details", {"order_id": "#W1000002"})
    assert world.call("find_user_id_by_name_zip", {"first_name": "ana", "last_name": "SOL", "zip": "78701"}) == USER


def test_writes_copy_on_write_and_stay_on_the_episodes_customer() -> None:
    environment = _environment(_episode_view={"base_orders": ["#W1000003"]})
    pristine = orjson.dumps(environment.world)
    world = _world(environment, "#W1000001")
    order = _call(world, "cancel_pending_order", order_id="#W1000001", reason="ordered by mistake")
    assert order["status"] == "cancelled"
    assert [e["transaction_type"] for e in order["payment_history"]] == ["payment", "payment", "refund", "refund"]
    snapshot = world.snapshot()
    assert snapshot["users"][USER]["payment_methods"]["gift_card_1000002"]["balance"] == 20.0
    assert _call(world, "get_user_details", user_id="bo_rey_0002")["orders"] == ["#W1000003"]  # a shared order's owner
    with pytest.raises(ToolError):  # visible (a shared base order) but another customer's
        world.call("cancel_pending_order", {"order_id": "#W1000003", "reason": "no longer needed"})
    with pytest.raises(ToolError):
        world.call("cancel_pending_order", {"order_id": "#W1000001", "reason": "no longer needed"})
    assert orjson.dumps(environment.world) == pristine
    assert set(snapshot["orders"]) == {"#W1000001"} and set(snapshot["users"]) == {USER}


def test_swaps_check_variants_and_settle_money() -> None:
    environment = _environment()
    world = _world(environment, "#W1000001")
    swap = {"order_id": "#W1000001", "item_ids": ["2000000001"]}
    for new_id, why in (("2000000003", "not available"), ("2000000004", "clearance"), ("9", "not a variant")):
        with pytest.raises(ToolError, match=why):
            world.call("modify_pending_order_items", {**swap, "new_item_ids": [new_id],
                                                      "payment_method_id": "credit_card_1000001"})
    with pytest.raises(ToolError, match="insufficient"):
        world.call("modify_pending_order_items", {**swap, "new_item_ids": ["2000000002"],
                                                  "payment_method_id": "gift_card_1000002"})
    order = _call(world, "modify_pending_order_items", **swap, new_item_ids=["2000000002"],
                  payment_method_id="paypal_1000003")
    assert order["items"][0]["item_id"] == "2000000002" and order["payment_history"][-1]["amount"] == 30.0
    delivered = _world(environment, "#W1000002")
    order = _call(delivered, "exchange_delivered_order_items", order_id="#W1000002", item_ids=["2000000001"],
                  new_item_ids=["2000000002"], payment_method_id="credit_card_1000001")
    assert order["status"] == "exchange requested" and order["exchange_price_difference"] == 30.0


def test_returns_addresses_payments_and_new_orders() -> None:
    environment = _environment()
    delivered = _world(environment, "#W1000002")
    with pytest.raises(ToolError, match="reason"):
        delivered.call("return_delivered_order_items", {"order_id": "#W1000002", "item_ids": ["2000000001"],
                                                        "payment_method_id": "gift_card_1000002", "reason": "meh"})
    with pytest.raises(ToolError, match="not in the order"):
        delivered.call("return_delivered_order_items", {"order_id": "#W1000002", "item_ids": ["2000000002"],
                                                        "payment_method_id": "gift_card_1000002",
                                                        "reason": "defective"})
    order = _call(delivered, "return_delivered_order_items", order_id="#W1000002", item_ids=["2000000001"],
                  payment_method_id="gift_card_1000002", reason="defective")
    assert order["status"] == "return requested"
    assert delivered.snapshot()["users"][USER]["payment_methods"]["gift_card_1000002"]["balance"] == 60.0
    pending = _world(environment, "#W1000001")
    with pytest.raises(ToolError, match="single payment"):
        pending.call("modify_pending_order_payment", {"order_id": "#W1000001", "payment_method_id": "paypal_1000003"})
    address = {"address1": "2 B St", "address2": "Unit 4", "city": "Reno", "state": "NV", "country": "USA",
               "zip": "89501"}
    assert _call(pending, "modify_pending_order_address", order_id="#W1000001", **address)["address"] == address
    placed = _call(pending, "place_order", user_id=USER, item_ids=["2000000002"],
                   payment_method_id="gift_card_1000002", fallback_payment_method_id="credit_card_1000001")
    assert [e["amount"] for e in placed["payment_history"]] == [10.0, 70.0]
    assert placed["order_id"] in pending.snapshot()["orders"]


def test_default_statuses_unless_the_world_declares_its_own() -> None:
    processed = _environment()
    processed.world["orders"]["#W1000001"]["status"] = "processed"
    with pytest.raises(ToolError, match="'processed'"):
        _world(processed, "#W1000001").call("cancel_pending_order",
                                            {"order_id": "#W1000001", "reason": "no longer needed"})
    declared = _environment(_mechanics={"cancel": ["pending", "processed"]})
    declared.world["orders"]["#W1000001"]["status"] = "processed"
    _world(declared, "#W1000001").call("cancel_pending_order", {"order_id": "#W1000001", "reason": "no longer needed"})


def test_test_episodes_do_not_see_serving_only_variants() -> None:
    environment = _environment(_episode_view={"base_orders": [], "serving_only_variants": ["2000000002"]})
    test_view = _call(_world(environment, "#W1000002", split="test"), "get_product_details", product_id="1111111111")
    serving_view = _call(_world(environment, "#W1000002"), "get_product_details", product_id="1111111111")
    assert "2000000002" not in test_view["variants"] and "2000000002" in serving_view["variants"]


async def test_a_fresh_world_graded_with_the_gold_answer_but_no_actions(scenarios: dict[str, Scenario]) -> None:
    """Every task's fresh world grades (what each episode pays for is `python -m bench.run_benchmarks
    --only worlds`): carry-out tasks fail with nothing done, refusals and reads pass."""
    scenario = scenarios["retail_l2"]
    for task in (*scenario.serving, *scenario.test):
        world = DOMAIN.new_world(scenario.environment, task)
        reward = (await DOMAIN.grade(scenario.environment, task, world, gold_finish(task), None)).reward
        writes = any(action.name in WRITE_TOOLS for action in task.evaluator.actions)
        assert reward == (0.0 if writes else 1.0), task.task_id

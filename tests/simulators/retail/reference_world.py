"""A hand-written store in the public export's schema, small enough to check every branch by hand.

Customers of every tier (and one without a tier, which the reference reads as bronze), orders placed
to hit each check of the reference's write tools: caps per tier, split payments, an earlier refund,
fresh, stale and undated deliveries, clearance and unavailable variants, duplicate items. The store's
date is 2026-07-15.
"""

from __future__ import annotations

from simulators.protocol import JSON, Evaluator, ScenarioEnvironment, Task

BRONZE, SILVER, GOLD, NO_TIER = "bea_bronze_0001", "sam_silver_0002", "gia_gold_0003", "nim_plain_0004"


def _card(method_id: str, **extra: JSON) -> dict[str, JSON]:
    source = "gift_card" if method_id.startswith("gift_card") else "paypal" if method_id.startswith("paypal") \
        else "credit_card"
    return {"source": source, "id": method_id, **extra}


def _user(user_id: str, first: str, last: str, zip_code: str, tier: str | None, methods: list[dict[str, JSON]],
          orders: list[str]) -> dict[str, JSON]:
    user: dict[str, JSON] = {
        "user_id": user_id, "name": {"first_name": first, "last_name": last},
        "address": {"address1": "1 Main St", "address2": "Apt 2", "city": "Denver", "country": "USA",
                    "state": "CO", "zip": zip_code},
        "email": f"{first.lower()}@example.com",
        "payment_methods": {str(m["id"]): m for m in methods}, "orders": orders,
    }
    if tier is not None:
        user["membership"] = tier
    return user


def _variant(item_id: str, price: float, available: bool = True, clearance: bool = False) -> dict[str, JSON]:
    return {"item_id": item_id, "options": {"v": item_id[-1]}, "available": available, "price": price,
            **({"clearance": True} if clearance else {})}


PRODUCTS: dict[str, JSON] = {
    "100": {"name": "Jacket", "product_id": "100", "category": "apparel", "variants": {
        "1001": _variant("1001", 100.0), "1002": _variant("1002", 120.0),
        "1003": _variant("1003", 60.0, clearance=True), "1004": _variant("1004", 110.0, available=False),
        "1005": _variant("1005", 90.0)}},
    "200": {"name": "Headphones", "product_id": "200", "category": "electronics", "variants": {
        "2001": _variant("2001", 150.0), "2002": _variant("2002", 199.99),
        "2003": _variant("2003", 99.0, clearance=True)}},
    "300": {"name": "Mug", "product_id": "300", "category": "home", "variants": {
        "3001": _variant("3001", 45.0), "3002": _variant("3002", 32.5)}},
}


def _line(item_id: str) -> dict[str, JSON]:
    product = next(p for p in PRODUCTS.values() if item_id in p["variants"])
    variant = product["variants"][item_id]
    return {"name": product["name"], "product_id": product["product_id"], "item_id": item_id,
            "price": variant["price"], "options": variant["options"]}


def _order(order_id: str, user_id: str, status: str, items: list[str], payments: list[tuple[str, str, float]],
           delivered_at: str | None = None) -> dict[str, JSON]:
    order: dict[str, JSON] = {
        "order_id": order_id, "user_id": user_id,
        "address": {"address1": "1 Main St", "address2": "Apt 2", "city": "Denver", "state": "CO", "country": "USA",
                    "zip": "10001"},
        "items": [_line(item_id) for item_id in items], "status": status, "placed_at": "2026-06-20",
        "payment_history": [{"transaction_type": kind, "amount": amount, "payment_method_id": method}
                            for kind, method, amount in payments],
    }
    if delivered_at is not None:
        order["delivered_at"] = delivered_at
    return order


def _pay(method: str, amount: float) -> tuple[str, str, float]:
    return ("payment", method, amount)


ORDERS: dict[str, dict[str, JSON]] = {o["order_id"]: o for o in [
    _order("#W0000001", BRONZE, "pending", ["1001", "2001"], [_pay("credit_card_b1", 250.0)]),
    _order("#W0000002", SILVER, "pending", ["1001", "2001"], [_pay("credit_card_s1", 200.0),
                                                              _pay("gift_card_s2", 50.0)]),
    _order("#W0000003", GOLD, "pending", ["2002", "2002", "1002"], [_pay("credit_card_g1", 519.98)]),
    _order("#W0000004", GOLD, "pending", ["2002", "2002", "1002"], [_pay("credit_card_g1", 519.98),
                                                                    ("refund", "credit_card_g1", 30.0)]),
    _order("#W0000005", BRONZE, "delivered", ["1001", "1003", "3001"], [_pay("credit_card_b1", 205.0)], "2026-07-10"),
    _order("#W0000006", SILVER, "delivered", ["1001"], [_pay("credit_card_s1", 100.0)], "2026-06-01"),
    _order("#W0000007", GOLD, "delivered", ["2001", "3001"], [_pay("credit_card_g1", 150.0),
                                                              _pay("gift_card_g3", 45.0)], "2026-07-10"),
    _order("#W0000008", SILVER, "pending", ["1001"], [_pay("credit_card_s1", 60.0), _pay("gift_card_s2", 40.0)]),
    _order("#W0000009", BRONZE, "delivered", ["1001"], [_pay("credit_card_b1", 100.0)]),
    _order("#W0000010", GOLD, "delivered", ["2001"], [_pay("credit_card_g1", 150.0)], "2026-06-25"),
    _order("#W0000011", BRONZE, "pending", ["1001"], [_pay("credit_card_b1", 100.0)]),
    _order("#W0000012", NO_TIER, "pending", ["2002", "1001"], [_pay("credit_card_n1", 299.99)]),
    _order("#W0000013", SILVER, "pending", ["1001"], [_pay("credit_card_s1", 60.0), _pay("gift_card_s2", 40.0),
                                                      ("refund", "gift_card_s2", 40.0)]),
    _order("#W0000099", GOLD, "pending", ["3002"], [_pay("credit_card_g1", 32.5)]),
]}


def world() -> dict[str, JSON]:
    def owned(user_id: str) -> list[str]:
        return [order_id for order_id, order in ORDERS.items() if order["user_id"] == user_id]

    users = {
        BRONZE: _user(BRONZE, "Bea", "Bronze", "10001", "bronze", [
            _card("credit_card_b1", brand="visa", last_four="0001"),
            _card("credit_card_b2", brand="amex", last_four="0002"),
            _card("gift_card_b3", balance=15.0), _card("paypal_b4")], owned(BRONZE)),
        SILVER: _user(SILVER, "Sam", "Silver", "20002", "silver", [
            _card("credit_card_s1", brand="visa", last_four="0003"), _card("gift_card_s2", balance=40.0)],
            owned(SILVER)),
        GOLD: _user(GOLD, "Gia", "Gold", "30003", "gold", [
            _card("credit_card_g1", brand="visa", last_four="0004"),
            _card("credit_card_g2", brand="visa", last_four="0005"),
            _card("gift_card_g3", balance=15.0), _card("gift_card_g4", balance=0.0)], owned(GOLD)),
        NO_TIER: _user(NO_TIER, "Nim", "Plain", "40004", None, [
            _card("credit_card_n1", brand="visa", last_four="0006")], owned(NO_TIER)),
    }
    return {"users": users, "products": PRODUCTS, "orders": ORDERS, "_episode_view": {"base_orders": ["#W0000099"]}}


def environment() -> ScenarioEnvironment:
    return ScenarioEnvironment("", (), {}, world(), ())


def task(scenario: str, order_id: str, split: str = "serving") -> Task:
    """A task of `scenario` whose episode owns `order_id` (the metadata's order, as the export records it)."""
    return Task("t", scenario, "retail", scenario[-2:].upper(), split, 0, 1, "fully_specified",  # type: ignore[arg-type]
                "Current timestamp: 1\n\nHello.", Evaluator("general", "f", (), None, {"t": 1, "order_id": order_id}))

"""Customers and orders for generated tasks, written in the public export's record shapes.

Each task gets its own customer and order (an episode sees only its own order), built so that the
facts the records show are exactly the profile's: the order's status, payment form, shipping state
and items, the customer's tier, and for each leg the refund destination or paying method it names.
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass

from simulators.domains.retail.catalog import Catalog, IdMint
from simulators.domains.retail.model import Leg, Records, Request
from simulators.domains.retail.profiles import LegProfile, Profile
from simulators.domains.retail.vocabulary import TODAY
from simulators.protocol import JSON

__all__ = ["Built", "Population"]

FIRST_NAMES = (
    "Ada", "Bilal", "Camila", "Dmitri", "Elena", "Farah", "Gustavo", "Hana", "Ibrahim", "Jonas", "Keiko", "Lars",
    "Maya", "Nadia", "Oren", "Priya", "Quinn", "Rosa", "Samir", "Tessa", "Umar", "Vera", "Wen", "Ximena", "Yusuf",
    "Zoe", "Aria", "Bruno", "Chiara", "Diego", "Esme", "Felix", "Greta", "Hugo", "Ines", "Jae", "Kofi", "Leila",
)
LAST_NAMES = (
    "Abara", "Bianchi", "Castillo", "Dubois", "Eriksen", "Ferreira", "Gallo", "Haddad", "Ivanova", "Jensen",
    "Kato", "Lindqvist", "Mensah", "Novak", "Okoye", "Petrova", "Quint", "Rahman", "Sato", "Torres", "Ueda",
    "Varga", "Weber", "Xu", "Yilmaz", "Zielinski", "Alvarez", "Brennan", "Chowdhury", "Delgado",
)
STREETS = ("Alder Way", "Birch Lane", "Canal Street", "Dogwood Court", "Elm Row", "Fern Avenue", "Grove Road",
           "Harbor View", "Iris Place", "Juniper Drive", "Kestrel Road", "Linden Street", "Mill Lane")
CITIES: dict[str, tuple[tuple[str, str], ...]] = {
    "AZ": (("Phoenix", "850"), ("Tucson", "857")), "CA": (("Oakland", "946"), ("San Diego", "921")),
    "CO": (("Denver", "802"), ("Boulder", "803")), "FL": (("Tampa", "336"), ("Orlando", "328")),
    "GA": (("Atlanta", "303"), ("Savannah", "314")), "IL": (("Chicago", "606"), ("Evanston", "602")),
    "MA": (("Boston", "021"), ("Worcester", "016")), "MN": (("Minneapolis", "554"), ("Duluth", "558")),
    "NC": (("Raleigh", "276"), ("Durham", "277")), "NY": (("Buffalo", "142"), ("New York", "100")),
    "OH": (("Columbus", "432"), ("Dayton", "454")), "OR": (("Portland", "972"), ("Eugene", "974")),
    "PA": (("Pittsburgh", "152"), ("Erie", "165")), "TX": (("Austin", "787"), ("El Paso", "799")),
    "WA": (("Seattle", "981"), ("Spokane", "992")), "AK": (("Anchorage", "995"), ("Juneau", "998")),
    "HI": (("Honolulu", "968"), ("Hilo", "967")),
}
HOME_STATES = tuple(state for state in CITIES if state not in ("AK", "HI"))
SHIPPED = ("delivered", "return requested", "exchange requested")


@dataclass(frozen=True)
class Built:
    request: Request
    records: Records


def _days_ago(days: int) -> str:
    return (datetime.date.fromisoformat(TODAY) - datetime.timedelta(days=days)).isoformat()


class Population:
    def __init__(self, mint: IdMint, catalog: Catalog) -> None:
        self._mint = mint
        self._catalog = catalog
        self.users: dict[str, dict[str, JSON]] = {}
        self.orders: dict[str, dict[str, JSON]] = {}
        self._keys: set[tuple[str, str, str]] = set()

    def build(self, profile: Profile, rng: random.Random) -> Built:
        user = self._new_user(profile.membership, rng)
        order = self._new_order(user, profile, rng)
        legs = tuple(self._leg(leg, user, order, profile, rng) for leg in profile.legs)
        products = {str(item["product_id"]): self._catalog.products[str(item["product_id"])]
                    for item in order["items"]}
        return Built(Request(legs, profile.quote), Records(user, order, products))

    # ------------------------------------------------------------------------------------- customers

    def _new_user(self, membership: str, rng: random.Random) -> dict[str, JSON]:
        while True:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            address = self._address(rng.choice(HOME_STATES), rng)
            key = (first.lower(), last.lower(), str(address["zip"]))
            if key not in self._keys:
                break
        self._keys.add(key)
        user_id = f"{first.lower()}_{last.lower()}_{self._mint.digits(4)}"
        user: dict[str, JSON] = {
            "user_id": user_id, "name": {"first_name": first, "last_name": last}, "address": address,
            "email": f"{first.lower()}.{last.lower()}{rng.randint(10, 9999)}@example.com",
            "membership": membership, "payment_methods": {}, "orders": [],
        }
        for kind in ("credit_card", "credit_card", "paypal", "gift_card"):
            self._add_method(user, kind, rng)
        self.users[user_id] = user
        return user

    def _address(self, state: str, rng: random.Random) -> dict[str, JSON]:
        city, prefix = rng.choice(CITIES[state])
        return {"address1": f"{rng.randint(10, 999)} {rng.choice(STREETS)}", "address2": f"Suite {rng.randint(1, 999)}",
                "city": city, "country": "USA", "state": state, "zip": prefix + f"{rng.randint(0, 99):02d}"}

    def _add_method(self, user: dict[str, JSON], kind: str, rng: random.Random) -> str:
        method_id = f"{kind}_{self._mint.digits(7)}"
        method: dict[str, JSON] = {"id": method_id, "source": kind}
        if kind == "credit_card":
            method.update(brand=rng.choice(("visa", "mastercard", "amex")), last_four=f"{rng.randint(0, 9999):04d}")
        elif kind == "gift_card":
            method["balance"] = round(rng.uniform(10, 150), 2)
        user["payment_methods"][method_id] = method
        return method_id

    def _method_of(self, user: dict[str, JSON], kind: str, exclude: set[str], rng: random.Random) -> str:
        """A method of this kind on the account, not in `exclude` (a new one when all are)."""
        for method_id, method in user["payment_methods"].items():
            if method["source"] == kind and method_id not in exclude:
                return str(method_id)
        return self._add_method(user, kind, rng)

    # ---------------------------------------------------------------------------------------- orders

    def _new_order(self, user: dict[str, JSON], profile: Profile, rng: random.Random) -> dict[str, JSON]:
        items = self._items(profile, rng)
        order_id = "#W" + self._mint.digits(7)
        total = round(sum(float(item["price"]) for item in items), 2)
        home = user["address"]
        address = dict(home) if home["state"] == profile.ship_state else self._address(profile.ship_state, rng)
        order: dict[str, JSON] = {
            "order_id": order_id, "user_id": user["user_id"], "address": address, "items": items,
            "status": profile.status, "payment_history": self._payments(user, profile.payment, total, rng),
        }
        self._date(order, rng)
        user["orders"].append(order_id)
        self.orders[order_id] = order
        return order

    def _items(self, profile: Profile, rng: random.Random) -> list[JSON]:
        items: list[JSON] = []
        used: set[str] = set()
        for index, (category, item_class) in enumerate(profile.items):
            product_id = rng.choice([p for p in self._catalog.by_category(category) if p not in used])
            used.add(product_id)
            variants = self._catalog.variants(product_id, clearance=item_class == "clearance", available=True)
            if index == 0 and profile.special == "insufficient":
                top = max(float(v["price"]) for v in self._catalog.variants(product_id, False, True))
                variants = [v for v in variants if float(v["price"]) < top]
            variant = rng.choice(variants)
            items.append({"name": self._catalog.products[product_id]["name"], "product_id": product_id,
                          "item_id": variant["item_id"], "price": variant["price"], "options": variant["options"]})
        return items

    def _payments(self, user: dict[str, JSON], kind: str, total: float, rng: random.Random) -> list[JSON]:
        if kind == "split":
            card = self._method_of(user, "credit_card", set(), rng)
            gift = self._method_of(user, "gift_card", set(), rng)
            first = round(total * rng.choice((0.5, 0.6, 0.7)), 2)
            parts = [(card, first), (gift, round(total - first, 2))]
        else:
            parts = [(self._method_of(user, kind, set(), rng), total)]
        return [{"transaction_type": "payment", "amount": amount, "payment_method_id": method}
                for method, amount in parts]

    def _date(self, order: dict[str, JSON], rng: random.Random) -> None:
        if order["status"] in SHIPPED:
            delivered = rng.randint(2, 12)
            order["placed_at"] = _days_ago(delivered + rng.randint(3, 6))
            order["delivered_at"] = _days_ago(delivered)
        else:
            order["placed_at"] = _days_ago(rng.randint(1, 5))

    # ------------------------------------------------------------------------------------------ legs

    def _leg(self, profile_leg: LegProfile, user: dict[str, JSON], order: dict[str, JSON], profile: Profile,
             rng: random.Random) -> Leg:
        order_id, op = str(order["order_id"]), profile_leg.op
        requested = tuple(str(item["item_id"]) for item in order["items"][:profile.requested])
        if op == "cancel":
            return Leg(op, order_id, reason=profile_leg.reason)
        if op == "return":
            if profile.special == "not_found":
                requested = (self._stranger_item(order, rng),)
            destination = self._destination(profile_leg.refund_to, user, order, rng)
            return Leg(op, order_id, requested, payment_method_id=destination, reason=profile_leg.reason)
        if op == "modify_address":
            return Leg(op, order_id, address=self._new_address(profile_leg.new_state, order, rng))
        if op == "modify_payment":
            current = str(order["payment_history"][0]["payment_method_id"])
            method = self._method_of(user, profile_leg.pay_with, {current}, rng)
            self._fund(user, method, float(order["payment_history"][0]["amount"]), rng)
            return Leg(op, order_id, payment_method_id=method)
        return self._swap_leg(op, profile_leg, user, order, requested, profile.special == "insufficient", rng)

    def _swap_leg(self, op: str, profile_leg: LegProfile, user: dict[str, JSON], order: dict[str, JSON],
                  requested: tuple[str, ...], short: bool, rng: random.Random) -> Leg:
        items = {str(item["item_id"]): item for item in order["items"]}
        new_ids, difference = [], 0.0
        for item_id in requested:
            item = items[item_id]
            options = [v for v in self._catalog.variants(str(item["product_id"]), clearance=False, available=True)
                       if v["item_id"] != item_id and (not short or float(v["price"]) > float(item["price"]))]
            variant = rng.choice(options)
            new_ids.append(str(variant["item_id"]))
            difference += float(variant["price"]) - float(item["price"])
        method = self._method_of(user, profile_leg.pay_with, set(), rng)
        card = user["payment_methods"][method]
        if short:
            card["balance"] = round(max(0.0, difference) * rng.choice((0.2, 0.4, 0.6)), 2)
        else:
            self._fund(user, method, difference, rng)
        return Leg(op, str(order["order_id"]), requested, tuple(new_ids), method)

    def _fund(self, user: dict[str, JSON], method: str, amount: float, rng: random.Random) -> None:
        """Top a gift card up so it covers `amount` (the task is not about its balance)."""
        card = user["payment_methods"][method]
        if card["source"] == "gift_card" and float(card["balance"]) < amount:
            card["balance"] = round(amount + rng.uniform(5, 60), 2)

    def _destination(self, target: str, user: dict[str, JSON], order: dict[str, JSON], rng: random.Random) -> str:
        used = {str(entry["payment_method_id"]) for entry in order["payment_history"]}
        if target == "gift_card":
            return self._method_of(user, "gift_card", set(), rng)
        if target == "original_method":
            return str(order["payment_history"][0]["payment_method_id"])
        return self._method_of(user, rng.choice(("credit_card", "paypal")), used, rng)

    def _new_address(self, state: str, order: dict[str, JSON], rng: random.Random) -> dict[str, str]:
        while True:
            address = self._address(state, rng)
            if address != order["address"]:
                return {key: str(value) for key, value in address.items()}

    def _stranger_item(self, order: dict[str, JSON], rng: random.Random) -> str:
        """A real catalog item id that is not in the order."""
        held = {str(item["item_id"]) for item in order["items"]}
        product = self._catalog.products[rng.choice(sorted(self._catalog.products))]
        return str(rng.choice([item_id for item_id in product["variants"] if item_id not in held]))

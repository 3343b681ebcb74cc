"""One episode's view of the store, copy-on-write over the scenario's initial world.

Nothing is copied when an episode starts: reads go to the shared initial world, and a record is
copied the first time a tool writes it. In the built-in scenarios only orders of the episode's own
customer can be written (the owner of the episode's order) and only that customer and the owners of
shared orders exist. With `open_accounts` (the public export, as the reference runs it) every customer
can be looked up and every order the episode sees can be written; either way a write lands in the
episode's copy, never in what another episode sees. The snapshot holds the episode's own records
plus every record that ended up different from the initial world: the same content as hashing the
whole view, at a fraction of the cost.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from simulators.domains.retail.scope import WorldIndex
from simulators.errors import ToolError
from simulators.protocol import JSON

__all__ = ["EpisodeState", "json_copy"]


def json_copy(value: JSON) -> JSON:
    """A deep copy of JSON data (several times faster than copy.deepcopy)."""
    return orjson.loads(orjson.dumps(value))


class EpisodeState:
    def __init__(self, world: Mapping[str, JSON], index: WorldIndex, scope: tuple[str, ...],
                 hide_serving_only: bool, open_accounts: bool = False) -> None:
        self._world = world
        self.open_accounts = open_accounts
        self.index = index
        self.scope = scope
        self._hidden = index.serving_only if hide_serving_only else frozenset()
        self._orders: dict[str, dict[str, JSON]] = {}
        self._users: dict[str, dict[str, JSON]] = {}
        self._created: list[str] = []
        base_orders: Mapping[str, JSON] = world.get("orders", {})
        self.owner = str(base_orders[scope[0]].get("user_id", "")) if scope else ""

    # ------------------------------------------------------------------------------------------ reads

    def is_visible(self, order_id: str) -> bool:
        return order_id in self._orders or order_id in self.scope or order_id in self.index.base_orders

    def new_order_id(self) -> str:
        """A new order's id, derived from how many orders the episode sees so that an agent's episode and
        the gold replay (both from the same fresh view) mint the same id (the reference's rule)."""
        number = 9000000 + len(self.index.base_orders | set(self.scope)) + len(self._created)
        while self.is_visible(f"#W{number}"):
            number += 1
        return f"#W{number}"

    def order(self, order_id: str) -> Mapping[str, JSON]:
        if not self.is_visible(order_id):
            raise ToolError("order not found")
        found = self._orders.get(order_id)
        return found if found is not None else self._world["orders"][order_id]

    def user(self, user_id: str) -> Mapping[str, JSON]:
        """The episode's customer, or the owner of a shared order; nobody else exists for the episode."""
        found = self._users.get(user_id)
        if found is not None:
            return found
        users: Mapping[str, JSON] = self._world.get("users", {})
        if user_id not in users or not self._may_see(user_id):
            raise ToolError("user not found")
        user: Mapping[str, JSON] = users[user_id]
        return user

    def _may_see(self, user_id: str) -> bool:
        return self.open_accounts or user_id == self.owner or user_id in self.index.base_owners

    def find_user(self, first_name: str, last_name: str, zip_code: str) -> str:
        if not self.open_accounts:  # the reference matches the arguments as given
            first_name, last_name, zip_code = first_name.strip(), last_name.strip(), zip_code.strip()
        user_id = self.index.user_by_key.get((first_name.lower(), last_name.lower(), zip_code))
        if user_id is None:
            raise ToolError("user not found")
        self.user(user_id)  # raises for a customer this episode does not serve
        return user_id

    def product(self, product_id: str) -> Mapping[str, JSON]:
        products: Mapping[str, JSON] = self._world.get("products", {})
        if product_id not in products:
            raise ToolError("product not found")
        product: Mapping[str, JSON] = products[product_id]
        if self._hidden and not self._hidden.isdisjoint(product.get("variants", {})):
            variants = {k: v for k, v in product["variants"].items() if k not in self._hidden}
            return {**product, "variants": variants}
        return product

    def product_of_item(self, item_id: str) -> Mapping[str, JSON] | None:
        """The product (as this episode sees it) that has `item_id` among its variants."""
        product_id = self.index.product_of_item.get(item_id)
        if product_id is None:
            return None
        product = self.product(product_id)
        return product if item_id in product.get("variants", {}) else None

    def product_ids(self) -> list[str]:
        return sorted(self._world.get("products", {}))

    def variant(self, product_id: str, item_id: str) -> Mapping[str, JSON] | None:
        variants: Mapping[str, JSON] = self.product(product_id).get("variants", {})
        found: Mapping[str, JSON] | None = variants.get(item_id)
        return found

    def statuses(self, kind: str) -> frozenset[str]:
        return self.index.statuses[kind]

    # ----------------------------------------------------------------------------------------- writes

    def owned_order(self, order_id: str) -> Mapping[str, JSON]:
        """An order the episode may write: visible and owned by the episode's customer."""
        order = self.order(order_id)
        if self.open_accounts:
            return order
        if not self.owner or order.get("user_id") != self.owner:
            raise ToolError("order not found on the account in this conversation")
        return order

    def order_for_write(self, order_id: str) -> dict[str, JSON]:
        order = self.owned_order(order_id)
        if order_id not in self._orders:
            self._orders[order_id] = json_copy(order)
        return self._orders[order_id]

    def user_for_write(self, user_id: str) -> dict[str, JSON]:
        if user_id != self.owner and not self.open_accounts:
            raise ToolError("only the account in this conversation can be changed")
        if user_id not in self._users:
            self._users[user_id] = json_copy(self.user(user_id))
        return self._users[user_id]

    def add_order(self, order: dict[str, JSON]) -> None:
        order_id = str(order["order_id"])
        self._orders[order_id] = order
        self._created.append(order_id)
        user = self.user_for_write(str(order["user_id"]))
        user.setdefault("orders", []).append(order_id)

    # --------------------------------------------------------------------------------------- snapshot

    def snapshot(self) -> JSON:
        base_orders: Mapping[str, JSON] = self._world.get("orders", {})
        base_users: Mapping[str, JSON] = self._world.get("users", {})
        orders = {order_id: self.order(order_id) for order_id in self.scope}
        orders.update({order_id: record for order_id, record in self._orders.items()
                       if record != base_orders.get(order_id)})
        users = {self.owner: self.user(self.owner)} if self.owner in self._users or self.owner in base_users else {}
        users.update({user_id: record for user_id, record in self._users.items()
                      if record != base_users.get(user_id)})
        return json_copy({"orders": orders, "users": users})

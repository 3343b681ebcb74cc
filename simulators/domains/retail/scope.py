"""What one episode may see of the store, and the per-world lookups that make a fresh world cheap.

An episode sees the world's shared orders (`_episode_view.base_orders`, empty in built-in scenarios)
plus its own order: in an export world (one without `_mechanics`) the evaluator metadata's order, as
the reference's `apply_episode_view` does; in a built-in world the order ids written in the
instruction, or the metadata's order when the instruction names none that exist (the world is
trusted environment code; the agent never sees the metadata). Test episodes also lose catalog
variants marked serving-only, as in the public export.

Indexes are built once per environment and cached, so `new_world` never scans the catalog or the
customer base.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domains.retail.vocabulary import OFFICIAL_MECHANICS
from simulators.protocol import JSON, ScenarioEnvironment, Task

__all__ = ["WorldIndex", "episode_orders", "order_ids_in", "world_index"]

_ORDER_ID = re.compile(r"#?\bW(\d{7})\b")
_CACHE_SIZE = 32


@dataclass(frozen=True)
class WorldIndex:
    base_orders: frozenset[str]
    base_owners: frozenset[str]
    """Customers owning a shared order: visible to every episode, like their orders."""
    user_by_key: Mapping[tuple[str, str, str], str]
    """(first name, last name, zip), lower-cased -> user id."""
    serving_only: frozenset[str]
    """Variant item ids test episodes do not see."""
    statuses: Mapping[str, frozenset[str]]
    """Mechanics: write kind (cancel, modify, return, exchange) -> order statuses it accepts."""
    product_of_item: Mapping[str, str]
    """Variant item id -> the id of the first product listing it."""
    declares_mechanics: bool
    """The world is a built-in one (it declares `_mechanics`); an export world does not."""


_cache: dict[int, tuple[weakref.ref[ScenarioEnvironment], WorldIndex]] = {}
_lock = threading.Lock()


def world_index(environment: ScenarioEnvironment) -> WorldIndex:
    """The index of an environment's world, built on first use. Entries hold the environment weakly (the
    index holds no record), so the cache never keeps a scenario alive."""
    hit = _cache.get(id(environment))
    if hit is not None and hit[0]() is environment:
        return hit[1]
    index = _build_index(environment.world)
    with _lock:
        for key in [key for key, (ref, _) in _cache.items() if ref() is None]:
            del _cache[key]
        if len(_cache) >= _CACHE_SIZE:
            _cache.clear()
        _cache[id(environment)] = (weakref.ref(environment), index)
    return index


def _build_index(world: Mapping[str, JSON]) -> WorldIndex:
    view = world.get("_episode_view") or {}
    users = world.get("users", {})
    keys: dict[tuple[str, str, str], str] = {}
    for user_id, user in users.items():
        name, address = user.get("name", {}), user.get("address", {})
        key = (str(name.get("first_name", "")).lower(), str(name.get("last_name", "")).lower(),
               str(address.get("zip", "")))
        keys.setdefault(key, str(user_id))
    declared = world.get("_mechanics") or {}
    statuses = {kind: frozenset(declared.get(kind, default)) for kind, default in OFFICIAL_MECHANICS.items()}
    base_orders = frozenset(view.get("base_orders", []))
    orders = world.get("orders", {})
    owners = frozenset(str(orders[o].get("user_id")) for o in base_orders if o in orders)
    product_of_item: dict[str, str] = {}
    for product_id, product in world.get("products", {}).items():
        for item_id in product.get("variants", {}):
            product_of_item.setdefault(str(item_id), str(product_id))
    return WorldIndex(
        base_orders=base_orders, base_owners=owners,
        user_by_key=keys,
        serving_only=frozenset(view.get("serving_only_variants", [])),
        statuses=statuses,
        product_of_item=product_of_item,
        declares_mechanics="_mechanics" in world,
    )


def order_ids_in(text: str) -> list[str]:
    """Order ids written in a text, normalized to `#W` + 7 digits, in order of appearance."""
    return list(dict.fromkeys(f"#W{digits}" for digits in _ORDER_ID.findall(text)))


def episode_orders(world: Mapping[str, JSON], task: Task, metadata_first: bool = False) -> tuple[str, ...]:
    """The episode's own orders. The reference scopes an export episode by its metadata's order alone
    (`metadata_first`); the built-in scenarios by the orders its instruction names."""
    orders = world.get("orders", {})
    recorded = task.evaluator.metadata.get("order_id")
    by_metadata = (str(recorded),) if isinstance(recorded, str) and recorded in orders else ()
    if metadata_first and by_metadata:
        return by_metadata
    named = tuple(order_id for order_id in order_ids_in(task.instruction) if order_id in orders)
    return named or by_metadata

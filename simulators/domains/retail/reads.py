"""The read tools: look a customer up, show a customer, an order, a product.

They return the stored records as they are (the public export's shapes), except that a customer's
order list only shows orders this episode may see.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domains.retail.state import EpisodeState
from simulators.protocol import JSON

__all__ = ["find_user_id_by_name_zip", "get_order_details", "get_product_details", "get_user_details"]


def find_user_id_by_name_zip(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    return state.find_user(str(args["first_name"]), str(args["last_name"]), str(args["zip"]))


def get_user_details(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    user = state.user(str(args["user_id"]))
    shown = dict(user)
    shown["orders"] = [order_id for order_id in user.get("orders", []) if state.is_visible(str(order_id))]
    return shown


def get_order_details(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    return state.order(str(args["order_id"]))


def get_product_details(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    return state.product(str(args["product_id"]))

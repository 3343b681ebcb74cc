"""The scripted planner: reads the message, looks the records up with tools, decides, acts, finishes.

Stateless: every turn it re-reads the history, so a replayed episode takes the same path. It knows
the request only from the instruction and the world only from tool observations; the decision is the
same engine the generator used (`engine.decide`) applied to the policy it was given, so a planner
given the active policy is right by construction and one given stale documents is wrong exactly
where they are stale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from simulators.domain import PlannedCall, ToolExchange
from simulators.domains.retail.engine import decide
from simulators.domains.retail.model import Leg, Records, Request
from simulators.domains.retail.parsing import ParsedLeg, ParsedRequest, parse_instruction
from simulators.domains.retail.vocabulary import TOOL_OP, parse_policy
from simulators.protocol import JSON

__all__ = ["next_call"]

_WRITES = frozenset({*TOOL_OP, "place_order"})
_ERROR_CODES = (("insufficient", "insufficient_balance"), ("not found", "not_found"),
                ("not in the order", "not_found"), ("the order is", "invalid_status"))


def next_call(instruction: str, policy: Mapping[str, JSON], history: Sequence[ToolExchange]) -> PlannedCall:
    parsed = parse_instruction(instruction)
    if parsed is None:
        return _finish({}, "I cannot tell what the customer asks for; ending the conversation.")
    seen = Seen.of(history)
    if seen.write is not None:
        return _after_write(seen.write)
    lookup = _next_lookup(parsed, seen)
    if lookup is not None:
        return lookup
    records = seen.records(parsed.legs[0].order_id)
    if records is None:
        return _refuse("not_found", "The customer or the order could not be found.")
    outcome = decide(_bind(parsed, records), records, parse_policy(policy))
    if outcome.actions:
        action = outcome.actions[0]
        return PlannedCall(action.name, dict(action.kwargs), "The policy allows this; carrying it out.")
    if parsed.quote:
        return _finish({"answer": outcome.answer}, "Answering the question with the computed refund.")
    return _refuse(outcome.cite or "service_not_offered", "The policy does not allow this request.")


@dataclass
class Seen:
    """What earlier calls returned, keyed by the record they asked for."""

    calls: set[str] = field(default_factory=set)
    user_id: str | None = None
    users: dict[str, Mapping[str, JSON]] = field(default_factory=dict)
    orders: dict[str, Mapping[str, JSON]] = field(default_factory=dict)
    products: dict[str, Mapping[str, JSON]] = field(default_factory=dict)
    write: ToolExchange | None = None

    @classmethod
    def of(cls, history: Sequence[ToolExchange]) -> Seen:
        seen = cls()
        for exchange in history:
            seen.calls.add(_key(exchange.name, exchange.arguments))
            if exchange.name in _WRITES:
                seen.write = exchange
            elif not exchange.observation.startswith("Error"):
                seen._remember(exchange)
        return seen

    def _remember(self, exchange: ToolExchange) -> None:
        name, arguments, observation = exchange.name, exchange.arguments, exchange.observation
        if name == "find_user_id_by_name_zip":
            self.user_id = observation.strip().strip('"')
            return
        record = _json_object(observation)
        if record is None:
            return
        if name == "get_user_details":
            self.users[str(arguments.get("user_id"))] = record
        elif name == "get_order_details":
            self.orders[str(arguments.get("order_id"))] = record
        elif name == "get_product_details":
            self.products[str(arguments.get("product_id"))] = record

    def records(self, order_id: str) -> Records | None:
        user = self.users.get(self.user_id or "")
        order = self.orders.get(order_id)
        if user is None or order is None:
            return None
        return Records(user, order, self.products)


def _next_lookup(parsed: ParsedRequest, seen: Seen) -> PlannedCall | None:
    wanted = [("find_user_id_by_name_zip",
               {"first_name": parsed.first_name, "last_name": parsed.last_name, "zip": parsed.zip})]
    if seen.user_id:
        wanted.append(("get_user_details", {"user_id": seen.user_id}))
    wanted += [("get_order_details", {"order_id": leg.order_id}) for leg in parsed.legs]
    for order in seen.orders.values():
        wanted += [("get_product_details", {"product_id": str(item.get("product_id"))})
                   for item in order.get("items", [])]
    for name, arguments in wanted:
        if _key(name, arguments) not in seen.calls:
            return PlannedCall(name, arguments, f"Looking up what I need: {name}.")
    return None


def _bind(parsed: ParsedRequest, records: Records) -> Request:
    return Request(tuple(_bind_leg(leg, records) for leg in parsed.legs), parsed.quote)


def _bind_leg(leg: ParsedLeg, records: Records) -> Leg:
    if leg.op in ("exchange", "modify_items"):
        old, new = _pair(leg.item_ids, records)
        return Leg(leg.op, leg.order_id, old, new, leg.payment_method_id)
    if leg.op == "modify_address":
        return Leg(leg.op, leg.order_id, address=leg.address)
    if leg.op == "cancel":
        return Leg(leg.op, leg.order_id, reason=leg.reason)
    return Leg(leg.op, leg.order_id, leg.item_ids, payment_method_id=leg.payment_method_id, reason=leg.reason)


def _pair(item_ids: tuple[str, ...], records: Records) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Current items (those in the order) and their replacements (a variant of the same product)."""
    product_of = {str(item.get("item_id")): str(item.get("product_id")) for item in records.order.get("items", [])}
    old = [item_id for item_id in item_ids if item_id in product_of]
    spare = [item_id for item_id in item_ids if item_id not in product_of]
    new = []
    for item_id in old:
        variants = records.products.get(product_of[item_id], {}).get("variants", {})
        match = next((candidate for candidate in spare if candidate in variants), spare[0] if spare else "")
        if match in spare:
            spare.remove(match)
        new.append(match)
    return tuple(old), tuple(new)


def _after_write(write: ToolExchange) -> PlannedCall:
    if not write.observation.startswith("Error"):
        return _finish({}, "Done; the request is carried out.")
    lowered = write.observation.lower()
    code = next((code for phrase, code in _ERROR_CODES if phrase in lowered), "service_not_offered")
    return _refuse(code, "The store's system refused the operation.")


def _refuse(code: str, thought: str) -> PlannedCall:
    return _finish({"decision": "refuse", "reason": code}, thought)


def _finish(arguments: dict[str, JSON], thought: str) -> PlannedCall:
    return PlannedCall("finish", arguments, thought)


def _key(name: str, arguments: Mapping[str, JSON]) -> str:
    return name + orjson.dumps(dict(arguments), option=orjson.OPT_SORT_KEYS).decode()


def _json_object(text: str) -> dict[str, JSON] | None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None

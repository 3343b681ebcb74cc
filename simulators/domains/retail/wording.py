"""Customer messages: several wordings per intent, so the text never tells the outcome.

A message names what an agent needs to look things up (name and zip, the order id, item ids, the
payment method the customer means) and nothing the tools should be asked for (no tier, no category,
no status). Kinds of operation are told apart by words each template family keeps to itself (see
`simulators.domains.retail.parsing`), and a second leg follows a fixed connector.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from simulators.domains.retail.catalog import Catalog
from simulators.domains.retail.model import Leg, Records, Request
from simulators.protocol import JSON

__all__ = ["CONNECTORS", "instruction", "message"]

CONNECTORS = ("If that is not possible,", "Failing that,", "If you can't do that,", "Otherwise,")

_CANCEL = (
    "Please cancel order {oid}; {reason}.",
    "I'd like to cancel my order {oid} because {reason}.",
    "Could you cancel {oid}? {Reason}.",
    "Cancel {oid} for me, please. {Reason}.",
    "Hi, {oid} needs to be cancelled: {reason}.",
)
_RETURN = (
    "I want to return {items} from order {oid} because {reason}. Please refund {dest}.",
    "Please start a return on {oid} for {items}; {reason}. The refund should go to {dest}.",
    "Order {oid}: I'm sending back {items} since {reason}. Refund to {dest}, please.",
    "Could you process a return of {items} from my order {oid}? {Reason}. Put the money on {dest}.",
    "Return request for {oid}: {items}. {Reason}. Refund destination: {dest}.",
)
_EXCHANGE = (
    "I'd like to exchange {pairs} on order {oid}. Any price difference goes on {pay}.",
    "Please exchange {pairs} from my delivered order {oid}; settle the difference with {pay}.",
    "Order {oid} arrived, but I want to exchange {pairs}. Use {pay} for any difference.",
    "Exchange request for {oid}: {pairs}. Charge or credit the difference to {pay}.",
)
_MODIFY_ITEMS = (
    "Order {oid} hasn't shipped yet; please change {pairs}. Use {pay} for any difference.",
    "Before {oid} goes out, could you switch {pairs}? {Pay} covers the difference.",
    "Please update my order {oid}: {pairs}. Settle the price difference with {pay}.",
    "I need to modify {oid}: {pairs}. Any difference on {pay}.",
)
_MODIFY_ADDRESS = (
    "Please ship order {oid} to {address} instead.",
    "I've moved. Can you change the shipping address of {oid} to {address}?",
    "Update the delivery address on my order {oid}: {address}.",
    "Order {oid} should go to {address}, please.",
)
_MODIFY_PAYMENT = (
    "Please pay order {oid} with {pay} instead of the current method.",
    "Can you switch the payment on {oid} to {pay}?",
    "I'd like order {oid} charged to {pay} rather than how it was paid.",
    "Change the payment method of my order {oid} to {pay}, please.",
)
_QUOTE = (
    "How much would I get back if I returned {items} from order {oid} ({short}) with the refund to {dest}? "
    "If it can't be returned, the answer is 0.",
    "Before I decide: how much would a return of {items} from {oid} refund to {dest}? The reason would be: "
    "{short}. Tell me 0 if it isn't returnable.",
    "Quick question about {oid}: how much would I be refunded on {dest} for returning {items} ({short})? "
    "Say 0 if that return isn't possible.",
)
_FALLBACK = {
    "return": ("please return {items} instead ({short}) and refund {dest}.",
               "I'll return {items} instead, reason: {short}, with the refund to {dest}."),
    "cancel": ("please cancel the order instead; {reason}.",
               "just cancel {oid} ({short})."),
}
_SINGLE = {"cancel": _CANCEL, "return": _RETURN, "exchange": _EXCHANGE, "modify_items": _MODIFY_ITEMS,
           "modify_address": _MODIFY_ADDRESS, "modify_payment": _MODIFY_PAYMENT}
_REASONS = {
    ("cancel", "no longer needed"): ("I no longer need it", "it's no longer needed", "we no longer need it"),
    ("cancel", "ordered by mistake"): ("I ordered it by mistake", "it was ordered by mistake"),
    ("return", "defective"): ("it arrived defective", "it's defective", "the unit is defective"),
    ("return", "no longer needed"): ("I no longer need it", "it's no longer needed"),
    ("return", "wrong item"): ("it's the wrong item", "I received the wrong item"),
}
_METHOD_WORDS = {"gift_card": "my gift card", "credit_card": "my credit card", "paypal": "my PayPal account"}


def instruction(position: int, records: Records, body: str) -> str:
    name: Mapping[str, JSON] = records.user["name"]
    zip_code = records.user["address"]["zip"]
    return (f"Current timestamp: {position}\n\nCustomer: {name['first_name']} {name['last_name']} "
            f"(zip {zip_code}) writes:\n\"{body}\"")


def message(request: Request, records: Records, catalog: Catalog, rng: random.Random) -> str:
    first = request.legs[0]
    fields = _fields(first, records, catalog, rng)
    templates = _QUOTE if request.quote else _SINGLE[first.op]
    text = rng.choice(templates).format(**fields)
    if len(request.legs) > 1:
        second = request.legs[1]
        follow = rng.choice(_FALLBACK[second.op]).format(**_fields(second, records, catalog, rng))
        text = f"{text} {rng.choice(CONNECTORS)} {follow}"
    return text


def _fields(leg: Leg, records: Records, catalog: Catalog, rng: random.Random) -> dict[str, str]:
    items = {str(item["item_id"]): item for item in records.order["items"]}
    reason = rng.choice(_REASONS[(leg.op, leg.reason)]) if leg.reason else ""
    pay = _method_phrase(leg.payment_method_id)
    return {
        "oid": str(records.order["order_id"]),
        "items": " and ".join(_item_phrase(item_id, items, catalog) for item_id in leg.item_ids),
        "pairs": _pairs(leg, items, catalog),
        "pay": pay, "Pay": pay[:1].upper() + pay[1:], "dest": pay,
        "reason": reason, "Reason": reason[:1].upper() + reason[1:], "short": leg.reason,
        "address": _address_phrase(leg.address),
    }


def _item_phrase(item_id: str, items: Mapping[str, Mapping[str, JSON]], catalog: Catalog) -> str:
    item = items.get(item_id)
    if item is not None:
        return f"the {item['name']} (item {item_id})"
    for product in catalog.products.values():
        if item_id in product["variants"]:
            return f"the {product['name']} (item {item_id})"
    return f"item {item_id}"


def _pairs(leg: Leg, items: Mapping[str, Mapping[str, JSON]], catalog: Catalog) -> str:
    if leg.op not in ("exchange", "modify_items"):
        return ""
    word = "for" if leg.op == "exchange" else "to"
    phrases = []
    for old, new in zip(leg.item_ids, leg.new_item_ids, strict=True):
        product = catalog.products[str(items[old]["product_id"])]
        options = ", ".join(f"{k}: {v}" for k, v in sorted(product["variants"][new]["options"].items()))
        phrases.append(f"{_item_phrase(old, items, catalog)} {word} the {options} version (item {new})")
    return " and ".join(phrases)


def _method_phrase(method_id: str) -> str:
    kind = next((k for k in _METHOD_WORDS if method_id.startswith(k)), "")
    return f"{_METHOD_WORDS[kind]} ({method_id})" if kind else method_id


def _address_phrase(address: Mapping[str, str]) -> str:
    if not address:
        return ""
    return f"{address['address1']}, {address['address2']}, {address['city']}, {address['state']} {address['zip']}"

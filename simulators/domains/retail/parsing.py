"""Reading a customer message: who writes, about which order, asking for what.

This is the scripted planner's only window on the request. It looks for ids (order, item, payment
method), an address, a reason, and the words that name an operation, and splits a message with a
fallback ("..., otherwise ...") into two legs. Anything it cannot read it leaves empty; the planner
then ends the episode gracefully.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from simulators.domains.retail.scope import order_ids_in
from simulators.domains.retail.wording import CONNECTORS

__all__ = ["ParsedLeg", "ParsedRequest", "parse_instruction"]

_CUSTOMER = re.compile(r"Customer:\s*(\S+)\s+(\S+)\s*\(zip\s*(\d{5})\)")
_ITEM = re.compile(r"(?<![\d_])\d{10}(?!\d)")
_METHOD = re.compile(r"\b(?:gift_card|credit_card|paypal)_\d{7}\b")
_ADDRESS = re.compile(r"(\d+ [A-Za-z .']+?), ((?:Suite|Apt|Unit) \w+), ([A-Za-z .']+?), ([A-Z]{2}) (\d{5})")
_CONNECTOR = re.compile("|".join(re.escape(c) for c in CONNECTORS), re.IGNORECASE)
_OPS = (
    ("cancel", re.compile(r"\bcancel", re.IGNORECASE)),
    ("return", re.compile(r"\breturn|sending back", re.IGNORECASE)),
    ("exchange", re.compile(r"\bexchange", re.IGNORECASE)),
)
_REASONS = (("defective", "defective"), ("wrong item", "wrong item"), ("by mistake", "ordered by mistake"),
            ("no longer need", "no longer needed"))


@dataclass(frozen=True)
class ParsedLeg:
    op: str
    order_id: str
    item_ids: tuple[str, ...]
    payment_method_id: str
    reason: str
    address: dict[str, str]


@dataclass(frozen=True)
class ParsedRequest:
    first_name: str
    last_name: str
    zip: str
    legs: tuple[ParsedLeg, ...]
    quote: bool


def parse_instruction(text: str) -> ParsedRequest | None:
    customer = _CUSTOMER.search(text)
    orders = order_ids_in(text)
    if customer is None or not orders:
        return None
    body = text[customer.end():]
    quote = "how much" in body.lower()
    segments = _CONNECTOR.split(body, maxsplit=1)
    legs = []
    for segment in segments:
        leg = _parse_leg(segment, orders[0], quote)
        if leg is None:
            return None
        legs.append(leg)
    return ParsedRequest(customer.group(1), customer.group(2), customer.group(3), tuple(legs), quote)


def _parse_leg(segment: str, default_order: str, quote: bool) -> ParsedLeg | None:
    op = "return" if quote else _operation(segment)
    if op is None:
        return None
    orders = order_ids_in(segment)
    method = _METHOD.search(segment)
    return ParsedLeg(
        op=op, order_id=orders[0] if orders else default_order,
        item_ids=tuple(dict.fromkeys(_ITEM.findall(segment))),
        payment_method_id=method.group(0) if method else "",
        reason=_reason(segment, op), address=_address(segment),
    )


def _operation(segment: str) -> str | None:
    for op, pattern in _OPS:
        if pattern.search(segment):
            return op
    if _ADDRESS.search(segment):
        return "modify_address"
    if len(_ITEM.findall(segment)) >= 2:
        return "modify_items"
    if _METHOD.search(segment):
        return "modify_payment"
    return None


def _reason(segment: str, op: str) -> str:
    lowered = segment.lower()
    for phrase, reason in _REASONS:
        if phrase in lowered:
            return reason
    return "no longer needed" if op in ("cancel", "return") else ""


def _address(segment: str) -> dict[str, str]:
    found = _ADDRESS.search(segment)
    if found is None:
        return {}
    address1, address2, city, state, zip_code = found.groups()
    return {"address1": address1, "address2": address2, "city": city, "country": "USA", "state": state,
            "zip": zip_code}

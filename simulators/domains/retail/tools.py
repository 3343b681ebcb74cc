"""Tool schemas (OpenAI function format) of the built-in retail scenarios.

Names and argument names are the public export's; `modify_pending_order_address` and
`modify_pending_order_payment` take their arguments from the tau-bench retail tools the export
descends from. `finish` is the retail finish of the protocol: answer, decision, reason.
"""

from __future__ import annotations

from simulators.protocol import JSON

__all__ = ["TOOLS", "tool_names"]

_STRING: dict[str, JSON] = {"type": "string"}


def _ids(description: str) -> dict[str, JSON]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _tool(name: str, description: str, properties: dict[str, JSON], required: list[str]) -> dict[str, JSON]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }}


def _order_id() -> dict[str, JSON]:
    return {**_STRING, "description": "The order id, e.g. '#W0000000' (the '#' is part of the id)."}


def _method(description: str) -> dict[str, JSON]:
    return {**_STRING, "description": description}


TOOLS: tuple[dict[str, JSON], ...] = (
    _tool("read_docs",
          "Read a store document: 'policy' (what may and may not be done) or 'workflow' (procedures, "
          "refusal codes). Give `section` to read one section by its heading.",
          {"doc": {"type": "string", "enum": ["policy", "workflow"], "description": "Which document."},
           "section": {**_STRING, "description": "A section heading, e.g. 'Returns'. Omit for the whole document."}},
          ["doc"]),
    _tool("find_user_id_by_name_zip", "Find a customer's user id from first name, last name and zip code.",
          {"first_name": _STRING, "last_name": _STRING, "zip": _STRING}, ["first_name", "last_name", "zip"]),
    _tool("get_user_details", "A customer's profile: membership tier, address, payment methods, orders.",
          {"user_id": {**_STRING, "description": "The user id, e.g. 'sara_lopez_1234'."}}, ["user_id"]),
    _tool("get_order_details", "An order's status, address, items and payment history.",
          {"order_id": _order_id()}, ["order_id"]),
    _tool("get_product_details", "A product's category and variants (item ids, options, price, availability, "
          "clearance).", {"product_id": {**_STRING, "description": "The product id (not an item id)."}},
          ["product_id"]),
    _tool("cancel_pending_order", "Cancel an order; the payments are refunded to the methods that paid. "
          "See the policy for when it is allowed.",
          {"order_id": _order_id(),
           "reason": {**_STRING, "description": "'no longer needed' or 'ordered by mistake'."}},
          ["order_id", "reason"]),
    _tool("modify_pending_order_items", "Change items of an order that has not shipped to other variants of "
          "the same products; the price difference is charged or refunded to the given method.",
          {"order_id": _order_id(), "item_ids": _ids("Current item ids to change."),
           "new_item_ids": _ids("Replacement item ids, in the same order as item_ids."),
           "payment_method_id": _method("Method that pays or receives the price difference.")},
          ["order_id", "item_ids", "new_item_ids", "payment_method_id"]),
    _tool("modify_pending_order_address", "Change the shipping address of an order that has not shipped.",
          {"order_id": _order_id(), "address1": _STRING, "address2": _STRING, "city": _STRING,
           "state": {**_STRING, "description": "Two-letter state code, e.g. 'CA'."}, "country": _STRING,
           "zip": _STRING},
          ["order_id", "address1", "address2", "city", "state", "country", "zip"]),
    _tool("modify_pending_order_payment", "Pay an order that has not shipped with another method on file; "
          "the old method is refunded.",
          {"order_id": _order_id(), "payment_method_id": _method("The new payment method id.")},
          ["order_id", "payment_method_id"]),
    _tool("return_delivered_order_items", "Return items of a delivered order; the refund goes to the given "
          "method. See the policy for when it is allowed.",
          {"order_id": _order_id(), "item_ids": _ids("Item ids to return."),
           "payment_method_id": _method("Refund destination payment method id."),
           "reason": {**_STRING, "description": "'defective', 'no longer needed' or 'wrong item'."}},
          ["order_id", "item_ids", "payment_method_id", "reason"]),
    _tool("exchange_delivered_order_items", "Exchange items of a delivered order for other variants of the "
          "same products; the price difference is charged or refunded to the given method.",
          {"order_id": _order_id(), "item_ids": _ids("Item ids to exchange."),
           "new_item_ids": _ids("Replacement item ids, in the same order as item_ids."),
           "payment_method_id": _method("Method that pays or receives the price difference.")},
          ["order_id", "item_ids", "new_item_ids", "payment_method_id"]),
    _tool("finish", "End the episode, once, as the only call of its turn: finish() after carrying a request "
          "out, finish(answer=...) to answer a question, finish(decision='refuse', reason='<code>') to "
          "decline.",
          {"answer": {"description": "The answer to a question: a number or a string. Omit otherwise."},
           "decision": {"type": "string", "enum": ["refuse"], "description": "'refuse' to decline the request."},
           "reason": {**_STRING, "description": "The refusal code (with decision='refuse')."}},
          []),
)


def tool_names() -> tuple[str, ...]:
    return tuple(str(tool["function"]["name"]) for tool in TOOLS)

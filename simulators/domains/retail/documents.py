"""The texts an agent reads: the system prompt, policy.md, workflow.md, and the Oracle bulletins.

Rules are rendered into sentences by one function, so the documents, the bulletins and the machine-
readable blocks at their ends always say the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domains.retail.vocabulary import TODAY, Rule, policy_json
from simulators.policy_block import render_policy_block

__all__ = ["bulletin", "policy_document", "rule_sentence", "system_prompt", "workflow_document"]

_OP_NOUN = {
    "cancel": "Cancelling an order", "return": "Returning items", "exchange": "Exchanging items",
    "modify_items": "Changing the items of an order", "modify_address": "Changing an order's shipping address",
    "modify_payment": "Changing an order's payment method",
}
_CONDITION = {
    "status": "the order status is", "payment": "the order was paid with",
    "membership": "the customer's membership tier is", "reason": "the stated reason is",
    "category": "an item's category is", "item_class": "an item is", "ship_state": "the order ships to",
    "new_state": "the new address is in", "refund_to": "the refund would go to",
    "pay_with": "the payment method to use is",
}
_SUBJECT = {
    "status": "order status", "payment": "how the order was paid", "membership": "membership tier",
    "reason": "the stated reason", "category": "item category", "item_class": "clearance status",
    "ship_state": "the shipping state", "new_state": "the new address's state",
    "refund_to": "the refund destination", "pay_with": "the payment method used",
}
_VALUE_WORDS = {
    "credit_card": "a credit card", "paypal": "PayPal", "gift_card": "a gift card",
    "clearance": "a clearance item", "regular": "a regular (non-clearance) item",
    "original_method": "the original payment method (the one that made the order's first payment)",
    "other_method": "a card or PayPal account that did not pay for the order",
}
_PAYMENT_WORDS = {
    "credit_card": "a credit card alone", "paypal": "PayPal alone", "gift_card": "a gift card alone",
    "split": "a split payment (credit card + gift card)",
}
"""How an order was paid: a single method, said so, so that 'gift card' never reads as 'split'."""
_SECTIONS = (
    ("Cancellation", ("cancel",)), ("Returns", ("return",)), ("Exchanges", ("exchange",)),
    ("Modifications", ("modify_items", "modify_address", "modify_payment")),
)


def rule_sentence(rule: Rule) -> str:
    noun = _OP_NOUN.get(rule.op, rule.op)
    if not rule.deny:
        return f"{noun} is not restricted by {_SUBJECT.get(rule.attribute, rule.attribute)}."
    words = _PAYMENT_WORDS if rule.attribute == "payment" else _VALUE_WORDS
    values = " or ".join(words.get(value, value) for value in rule.deny)
    condition = _CONDITION.get(rule.attribute, f"{rule.attribute} is")
    return f"{noun} is refused when {condition} {values} (code: {rule.reason})."


def _rule_lines(policy: Mapping[str, Rule], ops: tuple[str, ...]) -> list[str]:
    return [f"- {rule_sentence(rule)}" for rule in sorted(policy.values(), key=lambda r: (r.op, r.rule_id))
            if rule.op in ops]


def policy_document(policy: Mapping[str, Rule]) -> str:
    parts = ["# Retail store policy", "",
             "What may and may not be done for a customer. Anything not refused below is allowed, as long as "
             "the store's systems accept it.", ""]
    for title, ops in _SECTIONS:
        lines = _rule_lines(policy, ops) or ["- No restrictions beyond what the store's systems check."]
        parts += [f"## {title}", *lines, ""]
    parts += ["## Money",
              "- A return refunds the full price of the returned items to the chosen destination.",
              "- Cancelling refunds every payment to the method that made it.",
              "- A gift card can only pay what its balance covers (code: insufficient_balance).", "",
              "## Policy block",
              "The same rules, machine-readable: rule id -> {op, attribute, deny, reason}.", "",
              render_policy_block(policy_json(policy)), ""]
    return "\n".join(parts)


def workflow_document() -> str:
    return "\n".join([
        "# Retail workflow", "",
        "## Procedure",
        "1. Identify the customer: `find_user_id_by_name_zip`, then `get_user_details` (membership tier, "
        "payment methods and their kinds, gift card balances).",
        "2. Read the order with `get_order_details` (status, shipping address, items, payment history; the "
        "first payment's method is the original payment method). Order ids start with '#W'.",
        "3. Read each item's product with `get_product_details` (category, variants, clearance flag, stock).",
        "4. Check every rule of the policy that concerns the operation. If one refuses it, do not call a "
        "write tool: finish with decision 'refuse' and the rule's code.",
        "5. Otherwise call the write tool once, then `finish()`.", "",
        "## Alternatives",
        "When a customer gives a fallback ('if that is not possible, ...'), carry out the first request "
        "the policy allows and only that one. Refuse only when none is allowed, citing why the first one "
        "is not.", "",
        "## Questions",
        "For a 'how much would I get back' question, do not write anything: answer with the refund the "
        "return would pay (the items' prices), or 0 if the return would be refused: `finish(answer=...)`.", "",
        "## Refusals",
        "- service_not_offered: the store does not offer this operation for this request.",
        "- invalid_status: the order's status (or payment state) does not allow it.",
        "- destination_not_allowed: the refund destination, paying method or shipping destination is not "
        "permitted.",
        "- insufficient_balance: a gift card cannot cover the amount.",
        "- final_sale: a clearance item is final sale.",
        "- not_found: the order or an item does not exist or is not in the order.",
        "- over_threshold, window_expired: an amount or a time limit is exceeded.", "",
    ])


def system_prompt() -> str:
    return "\n".join([
        f"You are a customer-service agent of an online store. Today is {TODAY}.", "",
        "# How you work",
        "- Each customer message is one request about one order. Identify the customer first.",
        "- The store's documents are read with read_docs(doc, section): 'policy' (rules) and 'workflow' "
        "(procedure, refusal codes). They can be out of date: the store's actual current practice may allow "
        "things they forbid or forbid things they allow, and you are judged against actual practice.",
        "- Sections: policy: " + ", ".join(title for title, _ in _SECTIONS) + ", Money, Policy block; "
        "workflow: Procedure, Alternatives, Questions, Refusals.",
        "- The customer has already confirmed the request: act without asking again.",
        "- Never invent ids; use the tools to read records.",
        "- If the request is not allowed, do not call a write tool: finish(decision='refuse', reason=<code>).",
        "",
        "# Protocol",
        "Exactly one tool call per turn. End with exactly one finish: finish() after carrying a request "
        "out, finish(answer=...) for a question, finish(decision='refuse', reason=<code>) to decline.",
        "Refusal codes: service_not_offered, invalid_status, destination_not_allowed, insufficient_balance, "
        "over_threshold, window_expired, final_sale, not_found.", "",
    ])


def bulletin(policy: Mapping[str, Rule]) -> str:
    lines = ["# Internal policy bulletin (authoritative)",
             "The store's current practice, complete. Where it differs from the documents, this bulletin wins. "
             "Anything not refused here is allowed (the store's systems and gift card balances still apply).", ""]
    for title, ops in _SECTIONS:
        lines += [f"{title}:", *(_rule_lines(policy, ops) or ["- No restrictions."])]
    return "\n".join([*lines, "", render_policy_block(policy_json(policy))])

"""Instruction wording: several phrasings per case form, chosen at random, never by verdict.

The text names the ids and amounts a reviewer would be handed; everything a rule keys on beyond
that (merchant region, account verification and tenure, today's total, payee age and flags) has
to be looked up.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from simulators.protocol import JSON

__all__ = ["instruction_body", "with_timestamp"]

_SINGLE = {
    "card_transaction": (
        "Card authorization {case} is on hold: account {account} tried to pay ${amount} at {merchant}. "
        "Settle it.",
        "Please decide pending card case {case}: ${amount} at {merchant}, charged to account {account}.",
        "Account {account} has a ${amount} purchase at {merchant} waiting for review as {case}. "
        "Resolve it per current practice.",
        "Held charge {case}: {merchant} is asking ${amount} of account {account}. Make the decision.",
        "Review queue item {case} - a ${amount} card payment from account {account} to {merchant}.",
    ),
    "limit_increase": (
        "Limit request {case}: account {account} would like its credit limit raised to ${amount}. Decide it.",
        "Please review credit-limit case {case} for account {account}, which asks for a ${amount} limit.",
        "Account {account} applied for a new credit limit of ${amount} (case {case}). Record the outcome.",
        "Underwriting item {case}: raise account {account} to a ${amount} limit? Settle it per current practice.",
        "Case {case} is a credit-limit increase to ${amount} for account {account}. Make the call.",
    ),
    "outbound_transfer": (
        "Outbound transfer {case}: account {account} is sending ${amount} to {payee}. Decide it.",
        "Please screen transfer case {case}, ${amount} from account {account} to {payee}.",
        "Account {account} wants to wire ${amount} to {payee}; the payment is held as {case}. Resolve it.",
        "Payment {case} is waiting: ${amount} to {payee} from account {account}. Record the decision.",
        "Transfer review {case} - account {account} -> {payee}, ${amount}. Settle it per current practice.",
    ),
}

_LEGS = {
    "card_transaction": (
        "Card case {case} on account {account}: {merchant} submitted ${first}. The cardholder would also "
        "accept {rest}. Carry out the best option current practice allows.",
        "Account {account} has a held purchase at {merchant} (case {case}) for ${first}; failing that, "
        "{rest}. Resolve it.",
        "Please settle card case {case}: ${first} at {merchant} for account {account}, with fallbacks of {rest}.",
    ),
    "limit_increase": (
        "Limit case {case}: account {account} asks for ${first}, and would settle for {rest}. Decide it.",
        "Account {account} wants its limit raised to ${first} under case {case}; acceptable alternatives "
        "are {rest}. Record the outcome.",
        "Please review credit-limit case {case} for account {account}: ${first} preferred, otherwise {rest}.",
    ),
    "outbound_transfer": (
        "Payment case {case}: account {account} wants to send {first_payment}; failing that {rest}.",
        "Account {account} lists ranked payment options under case {case}: {first_payment}, then {rest}. "
        "Carry out the best one current practice allows.",
        "Please settle transfer case {case} for account {account} - first choice {first_payment}, "
        "fallbacks {rest}.",
    ),
}

_BATCH = (
    "Payment batch {case} on account {account}: {count} lines totalling ${total} - {lines}. Settle every line.",
    "Account {account} submitted batch {case} with {count} payments ({lines}). Decide each line.",
    "Please screen payment batch {case} ({count} lines, ${total} in all) for account {account}: {lines}.",
)


def _money(value: JSON) -> str:
    return f"{float(value):.2f}"


def _name(records: Mapping[str, Mapping[str, JSON]], record_id: JSON) -> str:
    record = records.get(str(record_id), {})
    return f"{record.get('name', 'unknown')} ({record_id})"


def _payment(payees: Mapping[str, Mapping[str, JSON]], part: Mapping[str, JSON]) -> str:
    return f"${_money(part['amount'])} to {_name(payees, part['payee_id'])}"


def _legs_text(rng: random.Random, case: Mapping[str, JSON], values: dict[str, str],
               payees: Mapping[str, Mapping[str, JSON]]) -> str:
    legs = case["legs"]
    if case["kind"] == "outbound_transfer":
        values["first_payment"] = _payment(payees, legs[0])
        values["rest"] = " or ".join(_payment(payees, leg) for leg in legs[1:])
    else:
        key = "requested" if case["kind"] == "limit_increase" else "amount"
        values["first"] = _money(legs[0][key])
        values["rest"] = " or ".join(f"${_money(leg[key])}" for leg in legs[1:])
    return rng.choice(_LEGS[str(case["kind"])]).format(**values)


def instruction_body(rng: random.Random, case: Mapping[str, JSON], merchants: Mapping[str, Mapping[str, JSON]],
                     payees: Mapping[str, Mapping[str, JSON]]) -> str:
    values = {"case": str(case["case_id"]), "account": str(case["account_id"])}
    if "merchant_id" in case:
        values["merchant"] = _name(merchants, case["merchant_id"])
    if "payee_id" in case:
        values["payee"] = _name(payees, case["payee_id"])
    if case.get("lines"):
        lines = case["lines"]
        values.update(count=str(len(lines)), total=_money(sum(float(line["amount"]) for line in lines)),
                      lines=" / ".join(f"line {line['line']}: {_payment(payees, line)}" for line in lines))
        return rng.choice(_BATCH).format(**values)
    if case.get("legs"):
        return _legs_text(rng, case, values, payees)
    values["amount"] = _money(case.get("requested_limit", case.get("amount")))
    return rng.choice(_SINGLE[str(case["kind"])]).format(**values)


def with_timestamp(position: int, body: str) -> str:
    return f"Current timestamp: {position}\n\n{body}"

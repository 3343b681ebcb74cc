"""The scripted banking agent's next call, reached through the instruction and the tools only.

Walk: read the case named in the instruction, look up its account, merchant and payees, apply the
given policy, make the one decision call, finish. Each step is re-derived from the history, so the
planner is stateless. Anything unexpected (no case id, a lookup error, an unreadable policy) still
ends the episode with `finish`, never a loop: a lookup is never repeated and a decision is made once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from simulators.domain import PlannedCall, ToolExchange
from simulators.domains.banking.records import ENTITY_TABLES, case_ids_in, referenced_payees
from simulators.domains.banking.resolve import Lookups, decision_call, resolve
from simulators.domains.banking.rules import parse_rules
from simulators.protocol import JSON

__all__ = ["DECISION_TOOLS", "next_call"]

DECISION_TOOLS = frozenset({"approve_case", "deny_case", "escalate_case", "execute_leg", "decide_batch"})
_ARGUMENT = {tool: argument for tool, (_, argument) in ENTITY_TABLES.items()}
_MISSING: dict[str, JSON] = {"__missing__": True}


def _finish(why: str) -> PlannedCall:
    return PlannedCall("finish", {}, why)


def _observed(history: Sequence[ToolExchange], tool: str, key: str, value: str) -> Mapping[str, JSON]:
    """The parsed result of an earlier lookup: `_MISSING` if never made, `{}` if it failed."""
    for exchange in history:
        if exchange.name == tool and exchange.arguments.get(key) == value:
            try:
                parsed = orjson.loads(exchange.observation)
            except orjson.JSONDecodeError:
                return {}
            return parsed if isinstance(parsed, dict) else {}
    return _MISSING


def _wanted_lookups(case: Mapping[str, JSON]) -> list[tuple[str, str]]:
    """(tool, id) for every record the case refers to, in the order a reviewer would look."""
    wanted = [("get_account_details", case.get("account_id")), ("get_merchant_details", case.get("merchant_id"))]
    wanted += [("get_payee_details", payee_id) for payee_id in referenced_payees(case)]
    return [(tool, value) for tool, value in wanted if isinstance(value, str)]


def next_call(instruction: str, policy: Mapping[str, JSON], history: Sequence[ToolExchange]) -> PlannedCall:
    if any(exchange.name in DECISION_TOOLS for exchange in history):
        return _finish("The decision is recorded; finishing.")
    case_ids = case_ids_in(instruction)
    if not case_ids:
        return _finish("The instruction names no case; nothing to decide.")
    case_id = case_ids[0]
    case = _observed(history, "get_case_details", "case_id", case_id)
    if case is _MISSING:
        return PlannedCall("get_case_details", {"case_id": case_id}, f"Look up case {case_id}.")
    if not case:
        return _finish(f"Case {case_id} could not be read; finishing without a decision.")
    found: dict[tuple[str, str], Mapping[str, JSON]] = {}
    for tool, value in _wanted_lookups(case):
        record = _observed(history, tool, _ARGUMENT[tool], value)
        if record is _MISSING:
            return PlannedCall(tool, {_ARGUMENT[tool]: value}, f"Look up {value}.")
        found[(tool, value)] = record
    return _decide(case_id, case, found, policy)


def _decide(case_id: str, case: Mapping[str, JSON], found: Mapping[tuple[str, str], Mapping[str, JSON]],
            policy: Mapping[str, JSON]) -> PlannedCall:
    lookups = Lookups(
        account=next((r for (t, _), r in found.items() if t == "get_account_details"), {}),
        merchant=next((r for (t, _), r in found.items() if t == "get_merchant_details"), {}),
        payees={value: r for (t, value), r in found.items() if t == "get_payee_details"},
    )
    rules = parse_rules(policy)
    name, arguments = decision_call(case_id, resolve(rules, case_id, case, lookups))
    return PlannedCall(name, arguments, f"Applying {len(rules)} policy rules to {case_id}: {name}.")

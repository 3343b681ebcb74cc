"""World records: table names, identifier patterns, and what a case refers to.

The record shapes are the public export's (`world.json` of banking_l1..l3), so its datasets load
unchanged: accounts, merchants and payees keyed by id; cases in `transactions` (TXN-),
`limit_requests` (LIM-) and `transfers` (TRF-). A case may carry ranked alternatives (`legs`) or,
for transfers, batch `lines`. Keys starting with `_` are evaluator-private (for example `_accept`,
the reason codes that all land on one graded state) and never reach the agent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from simulators.protocol import JSON

__all__ = [
    "CASE_ID",
    "CASE_TABLES",
    "ENTITY_TABLES",
    "applies_to",
    "case_form",
    "case_ids_in",
    "find_case",
    "public_view",
    "referenced_payees",
]

CASE_TABLES: dict[str, str] = {"TXN": "transactions", "LIM": "limit_requests", "TRF": "transfers"}
"""Case id prefix -> world table."""

ENTITY_TABLES: dict[str, tuple[str, str]] = {
    "get_account_details": ("accounts", "account_id"),
    "get_merchant_details": ("merchants", "merchant_id"),
    "get_payee_details": ("payees", "payee_id"),
}
"""Lookup tool -> (world table, argument name)."""

CASE_ID = re.compile(r"\b(?:TXN|LIM|TRF)-\d+\b")

_KIND_BY_PREFIX = {"TXN": "card_transaction", "LIM": "limit_increase", "TRF": "outbound_transfer"}


def case_ids_in(text: str) -> list[str]:
    """Case ids in the order they appear in a text."""
    return CASE_ID.findall(text)


def find_case(world: Mapping[str, JSON], case_id: str) -> Mapping[str, JSON] | None:
    table = world.get(CASE_TABLES.get(case_id.split("-", 1)[0], ""), {})
    record = table.get(case_id) if isinstance(table, dict) else None
    return record if isinstance(record, dict) else None


def applies_to(case_id: str) -> str:
    """Which rules decide a case: by its id prefix, since `kind` also names the form (batch)."""
    return _KIND_BY_PREFIX.get(case_id.split("-", 1)[0], "")


def case_form(case: Mapping[str, JSON]) -> str:
    """`batch`, `legs` or `single`."""
    if case.get("lines"):
        return "batch"
    if case.get("legs"):
        return "legs"
    return "single"


def _parts(case: Mapping[str, JSON]) -> Iterator[Mapping[str, JSON]]:
    for key in ("legs", "lines"):
        parts = case.get(key)
        if isinstance(parts, list):
            yield from (p for p in parts if isinstance(p, dict))


def referenced_payees(case: Mapping[str, JSON]) -> list[str]:
    """Payee ids of a case, its legs and its lines, first mention first, without repeats."""
    found = [case.get("payee_id"), *(part.get("payee_id") for part in _parts(case))]
    ordered: list[str] = []
    for payee_id in found:
        if isinstance(payee_id, str) and payee_id not in ordered:
            ordered.append(payee_id)
    return ordered


def public_view(case: Mapping[str, JSON]) -> dict[str, JSON]:
    """The case as the agent sees it: evaluator-private keys removed."""
    return {key: value for key, value in case.items() if not key.startswith("_")}

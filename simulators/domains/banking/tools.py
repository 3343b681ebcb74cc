"""Tool schemas of the banking scenarios (OpenAI function format), with the public export's names
and arguments. L1 cases are single requests, so L1 has no execute_leg or decide_batch."""

from __future__ import annotations

from simulators.protocol import JSON

__all__ = ["tool_schemas"]


def _tool(name: str, description: str, properties: dict[str, JSON], required: list[str]) -> dict[str, JSON]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


_STRING: JSON = {"type": "string"}
_CASE: dict[str, JSON] = {"case_id": _STRING}

_DECISION_ITEM: JSON = {
    "type": "object",
    "properties": {
        "line": {"type": "integer"},
        "action": {"type": "string", "enum": ["approve", "deny", "escalate"]},
        "reason": _STRING,
    },
    "required": ["line", "action"],
}


def _lookups(multi_part: bool) -> list[dict[str, JSON]]:
    forms = " It may list ranked alternatives under `legs` (leg 1 is the customer's first " \
            "preference) or payment lines under `lines`." if multi_part else ""
    return [
        _tool("read_docs", "Read the bank's risk documents (doc: policy | workflow), whole or one section.",
              {"doc": _STRING, "section": _STRING}, ["doc"]),
        _tool("get_case_details", "Look up the case under review: a pending card transaction (TXN-...), a "
              f"credit-limit increase request (LIM-...) or an outbound transfer (TRF-...).{forms}",
              _CASE, ["case_id"]),
        _tool("get_account_details", "Look up an account: holder, home state, verification level, standing, "
              "tenure in years, current credit limit and today's approved same-day total (today_total).",
              {"account_id": _STRING}, ["account_id"]),
        _tool("get_merchant_details", "Look up a merchant: name, category and region.",
              {"merchant_id": _STRING}, ["merchant_id"]),
        _tool("get_payee_details", "Look up a transfer payee: name, type, jurisdiction, how many days ago it "
              "was added (added_days_ago) and any restriction flags.",
              {"payee_id": _STRING}, ["payee_id"]),
    ]


def _decisions(multi_part: bool) -> list[dict[str, JSON]]:
    tools = [
        _tool("approve_case", "Approve the pending case. Final.", _CASE, ["case_id"]),
        _tool("deny_case", "Deny the pending case, citing a reason code. Final.",
              {**_CASE, "reason": _STRING}, ["case_id", "reason"]),
        _tool("escalate_case", "Send the pending case to manual review, citing a reason code. Final.",
              {**_CASE, "reason": _STRING}, ["case_id", "reason"]),
    ]
    if multi_part:
        tools += [
            _tool("execute_leg", "Carry out one of the case's ranked alternatives, by its leg number. Final.",
                  {**_CASE, "leg": {"type": "integer"}}, ["case_id", "leg"]),
            _tool("decide_batch", "Settle every line of a payment batch in one call. `decisions` lists one "
                  "{line, action, reason} object per line; action is approve, deny or escalate, and reason "
                  "is required unless the action is approve. Final.",
                  {**_CASE, "decisions": {"type": "array", "items": _DECISION_ITEM}}, ["case_id", "decisions"]),
        ]
    return tools


_FINISH = _tool("finish", "End the episode after your decision call. Takes no arguments; call it exactly "
                "once, as the only call of its turn.", {}, [])


def tool_schemas(multi_part: bool) -> tuple[dict[str, JSON], ...]:
    """Every tool of a banking scenario, `finish` last."""
    return (*_lookups(multi_part), *_decisions(multi_part), _FINISH)

"""The texts of a banking scenario: system prompt, policy manual, workflow guide, oracle bulletins.

Prose and policy blocks are rendered from the same rules, so the sentences and the machine-readable
block can never disagree. The manual renders the documented (stale) policy; a bulletin renders the
policy in force in one window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from simulators.domains.banking.rules import REASON_CODES, effective_rule
from simulators.domains.banking.timeline import Tier
from simulators.policy_block import render_policy_block
from simulators.protocol import JSON

__all__ = ["bulletin", "policy_manual", "system_prompt", "workflow_guide"]

_SUBJECT = {
    "card_transaction": "A card transaction",
    "limit_increase": "A limit-increase request",
    "outbound_transfer": "An outbound transfer",
}
_SECTION = {"card_transaction": "transactions", "limit_increase": "limits", "outbound_transfer": "transfers"}

_NOT_IN_FORCE = {
    "txn_corridor": "Merchant region never decides a card transaction: no category is blocked for overseas "
                    "merchants.",
    "txn_daily_cap": "There is no same-day spending cap: today's approved total does not affect a decision.",
    "txn_gift_card_verification": "Gift cards are open to every verification level.",
    "txn_limit_electronics": "Electronics purchases have no instant-approve limit.",
    "txn_limit_travel": "Travel purchases have no instant-approve limit.",
    "limit_standing": "Account standing does not affect a limit-increase request.",
    "limit_new_account_cap": "Tenure does not change the approvable cap: new accounts follow the same cap as "
                             "everyone else.",
    "limit_cap": "There is no approvable cap on limit increases.",
    "transfer_watchlist": "Payee restriction flags do not affect a transfer.",
    "transfer_new_payee": "How recently a payee was added does not affect a transfer.",
    "transfer_reporting": "There is no reporting threshold for transfers.",
}

_REASON_MEANING = {
    "corridor_blocked": "the merchant corridor (category and region) is closed under current practice",
    "verification_required": "the account's verification level is too low for this request",
    "over_limit": "the amount is above the category's instant-approve limit",
    "daily_cap": "today's approved total plus this amount is above the same-day cap",
    "account_standing": "the account's standing (a recent chargeback) blocks the request",
    "cap_exceeded": "the requested credit limit is above the approvable cap",
    "restricted_payee": "the payee carries a restriction that blocks the transfer",
    "new_payee_review": "the payee was added recently and the transfer needs review",
    "reportable_amount": "the transfer is above the reporting threshold",
}


def _money(value: JSON) -> str:
    return f"${float(value):.2f}"


def _amount_phrase(applies_to: str, value: JSON) -> str:
    if not value:
        return "for any amount"
    if applies_to == "limit_increase":
        return f"for a requested limit above {_money(value)}"
    return f"for more than {_money(value)}"


_PHRASES: dict[str, Callable[[str, JSON, str], str]] = {
    "verification_in": lambda kind, value, listed: f"on an account with {listed} verification",
    "standing_in": lambda kind, value, listed: f"from an account whose standing is {listed}",
    "tenure_years_under": lambda kind, value, listed: f"from an account open fewer than {value} years "
                                                      "(tenure_years)",
    "payee_added_days_under": lambda kind, value, listed: f"to a payee added fewer than {value} days ago",
    "payee_flag_in": lambda kind, value, listed: f"to a payee flagged {listed}",
    "payee_id_in": lambda kind, value, listed: f"to payee {listed}",
    "amount_over": lambda kind, value, listed: _amount_phrase(kind, value),
    "today_total_plus_amount_over": lambda kind, value, listed: (
        f"when the account's same-day approved total (today_total) plus this amount is above {_money(value)}"),
}


def _condition(applies_to: str, name: str, value: JSON) -> str:
    listed = _listed(value)
    phrase = _PHRASES.get(name)
    return phrase(applies_to, value, listed) if phrase else f"where {name} is {listed}"


def _merchant_phrase(when: Mapping[str, JSON]) -> list[str]:
    """Region and category read as one phrase: "at an overseas merchant in category jewelry"."""
    region, category = when.get("region_in"), when.get("category_in")
    if region is None and category is None:
        return []
    where = f"at a merchant whose region is {_listed(region)}" if region is not None else "at a merchant"
    return [where + (f" in category {_listed(category)}" if category is not None else "")]


def _listed(value: JSON) -> str:
    return " or ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def describe_rule(rule_id: str, rule: Mapping[str, JSON]) -> str:
    applies_to = str(rule["applies_to"])
    when = rule.get("when", {})
    when = when if isinstance(when, dict) else {}
    parts = _merchant_phrase(when) + [_condition(applies_to, n, v) for n, v in when.items()
                                      if n not in ("region_in", "category_in")]
    conditions = " ".join(parts)
    outcome = ("is denied" if rule["action"] == "deny" else "is escalated to manual review")
    return f"- {_SUBJECT[applies_to]} {conditions} {outcome} with reason `{rule['reason']}` ({rule_id})."


def _rule_lines(policy: Mapping[str, JSON], applies_to: str) -> list[str]:
    """In-force rules in checking order, then what the policy says is NOT a rule."""
    live = {rid: effective_rule(policy, rid) for rid in policy}
    ordered = sorted((r.get("order", 100), rid) for rid, r in live.items()
                     if isinstance(r, dict) and r.get("applies_to") == applies_to)
    lines = [describe_rule(rid, live[rid]) for _, rid in ordered]
    for rule_id, sentence in _NOT_IN_FORCE.items():
        if live.get(rule_id) is None and _applies_to_of(rule_id) == applies_to:
            lines.append(f"- {sentence}")
    return lines


def _applies_to_of(rule_id: str) -> str:
    prefix = rule_id.split("_", 1)[0]
    return {"txn": "card_transaction", "limit": "limit_increase"}.get(prefix, "outbound_transfer")


_CHECKING = ("Rules are checked in the order listed; the first one that matches decides. A request that no "
             "rule catches is approved.")

_FORMS = (
    "A case comes in one of three forms; get_case_details shows which.\n"
    "1) A single request: decide it with approve_case, deny_case or escalate_case.\n"
    "2) Ranked alternatives under `legs`, the customer's favourite first. Carry out the FIRST alternative "
    "the rules approve, with execute_leg. If none can be approved, the case takes leg 1's own disposition "
    "(deny_case or escalate_case); its reason may be the reason of any blocked alternative that has that "
    "same disposition.\n"
    "3) A payment batch under `lines`: each line is screened on its own against the transfer rules and "
    "gets its own action and reason, all in one decide_batch call. The batch total is not screened."
)


def _policy_sections(policy: Mapping[str, JSON]) -> list[str]:
    parts = []
    for applies_to, section in _SECTION.items():
        parts.append(f"## {section}\n" + "\n".join(_rule_lines(policy, applies_to)))
    return parts


def policy_manual(tier: Tier) -> str:
    forms = [f"## case_forms\n{_FORMS}"] if tier.multi_part else []
    parts = [
        "# Risk policy manual",
        "## decisions\nEvery pending case gets exactly one final decision: approve, deny, or escalate to "
        f"manual review. Deny and escalate cite a reason code. Decisions are final. {_CHECKING}",
        *forms,
        *_policy_sections(tier.documented),
        "## accounts\nAn account carries its verification level (basic or verified), standing (good or "
        "recent_chargeback), tenure in years, current credit limit and today's approved card total.",
        "## machine_readable\nThe rules of this manual as one policy block (rule id -> rule; `when` lists "
        "conditions that must all hold; `order` is the checking order):\n"
        + render_policy_block(dict(tier.documented)),
    ]
    return "\n\n".join(parts) + "\n"


def workflow_guide(tier: Tier) -> str:
    decide = ("approve_case / deny_case / escalate_case for a single request, execute_leg for ranked "
              "alternatives, decide_batch for a payment batch" if tier.multi_part
              else "approve_case, deny_case or escalate_case")
    steps = (
        "## review_steps\n1) get_case_details for the case named in the request.\n2) get_account_details, "
        "and get_merchant_details or get_payee_details as the case requires (every payee of every "
        f"alternative or line).\n3) Apply the policy and make exactly one decision call: {decide}.\n4) finish."
    )
    reasons = "\n".join(f"- `{code}`: {_REASON_MEANING[code]}." for code in REASON_CODES)
    return f"# Workflow guide\n\n{steps}\n\n## reasons\nReason codes:\n{reasons}\n"


def bulletin(tier: Tier, policy: Mapping[str, JSON]) -> str:
    forms = [f"[case forms]\n{_FORMS}"] if tier.multi_part else []
    sections = [f"[{section}]\n" + "\n".join(_rule_lines(policy, applies_to))
                for applies_to, section in _SECTION.items()]
    return "\n\n".join([
        "CURRENT PRACTICE (authoritative; it overrides the manual wherever they differ).",
        *sections, _CHECKING, *forms,
        "The complete policy in force, as a policy block:\n" + render_policy_block(dict(policy)),
    ]) + "\n"


def system_prompt(tier: Tier) -> str:
    tools = ["read_docs(doc, [section])", "get_case_details(case_id)", "get_account_details(account_id)",
             "get_merchant_details(merchant_id)", "get_payee_details(payee_id)", "approve_case(case_id)",
             "deny_case(case_id, reason)", "escalate_case(case_id, reason)"]
    if tier.multi_part:
        tools += ["execute_leg(case_id, leg)", "decide_batch(case_id, decisions)"]
    forms = ("A case may be a single request, ranked alternatives (`legs`) or a payment batch (`lines`); the "
             "policy's case_forms section says how each is settled.\n" if tier.multi_part else "")
    sections = "decisions, case_forms, transactions, limits, transfers, accounts, machine_readable" \
        if tier.multi_part else "decisions, transactions, limits, transfers, accounts, machine_readable"
    return (
        "You are a risk-operations reviewer at a retail bank. Today's date is 2026-08-08.\n\n"
        "# Your job\nEach request names one pending case: a card transaction (TXN-...), a credit-limit "
        "increase (LIM-...) or an outbound transfer (TRF-...). Look it up, check it against the bank's "
        "practice, and settle it with exactly ONE decision call. Decisions are final; deny and escalate cite "
        f"a reason code.\n{forms}"
        "The bank's documents can be out of date in either direction: some rules in force are not written "
        "down and some written values are stale. You are judged against the practice actually in force.\n\n"
        "# Documents\nThe policy manual and the workflow guide are not included here; read them with "
        f"read_docs. Sections - policy: {sections}; workflow: review_steps, reasons.\n\n"
        "# Tools\n" + "\n".join(f"- {t}" for t in tools) + "\n"
        "Ids are exact strings (TXN-######, LIM-######, TRF-######, ACC-######, MER-###, PAY-###); copy "
        "them from the case.\n\n"
        "# Protocol\nAct only through tool calls, exactly one per turn; a turn with several calls runs none "
        "of them. After your decision call, call finish() (no arguments) as the only call of its turn.\n"
    )

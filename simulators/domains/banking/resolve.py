"""From a case and its looked-up records to the decision a policy calls for, and the tool call.

One engine serves three readers: the generator (gold under the active policy, and what a
documents-follower would do), the scripted planner (whatever policy it was given), and the tests.
Keeping them on one engine is what makes "docs-only is wrong exactly on hidden tasks" hold.

Case forms:
- single: the first matching rule decides (approve when none matches).
- legs (ranked alternatives): carry out the first leg the policy approves; when none is
  approvable the case takes leg 1's disposition, and any reason of a blocked leg with that same
  disposition is accepted.
- batch: every line is decided on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domains.banking.records import applies_to, case_form
from simulators.domains.banking.rules import Request, Rule, Verdict, first_verdict
from simulators.protocol import JSON

__all__ = ["Lookups", "Outcome", "decision_call", "resolve", "same_graded_state"]


@dataclass(frozen=True)
class Lookups:
    """What the lookup tools returned for a case (empty mappings for what is unknown)."""

    account: Mapping[str, JSON]
    merchant: Mapping[str, JSON]
    payees: Mapping[str, Mapping[str, JSON]]


@dataclass(frozen=True)
class Outcome:
    form: str
    """`single`, `legs` or `batch`."""
    verdict: Verdict = Verdict("approve")
    """The case's disposition (single, or legs when no leg is approvable)."""
    leg: int | None = None
    """The leg carried out, when one is."""
    accepted: tuple[str, ...] = ()
    """Legs with no approvable leg: every reason that lands on the same graded state."""
    lines: tuple[tuple[int, Verdict], ...] = ()


def _number(value: JSON, default: float = 0.0) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _today_total(case: Mapping[str, JSON], account: Mapping[str, JSON]) -> float:
    return _number(account.get("today_total", case.get("same_day_approved_total", 0.0)))


def _request(case_id: str, case: Mapping[str, JSON], part: Mapping[str, JSON], lookups: Lookups) -> Request:
    """The request a single case, one of its legs or one of its lines puts to the rules."""
    kind = applies_to(case_id)
    amount_key = "requested" if "requested" in part else "requested_limit" if kind == "limit_increase" else "amount"
    payee_id = part.get("payee_id", case.get("payee_id"))
    payee = lookups.payees.get(payee_id, {}) if isinstance(payee_id, str) else {}
    added = part.get("payee_added_days_ago", payee.get("added_days_ago"))
    return Request(
        applies_to=kind,
        amount=_number(part.get(amount_key)),
        account=lookups.account,
        merchant=lookups.merchant,
        payee=payee,
        payee_id=payee_id if isinstance(payee_id, str) else None,
        today_total=_today_total(case, lookups.account),
        payee_added_days_ago=_number(added) if isinstance(added, int | float) else None,
    )


def _parts(case: Mapping[str, JSON], key: str, number_key: str) -> list[tuple[int, Mapping[str, JSON]]]:
    parts = case.get(key)
    if not isinstance(parts, list):
        return []
    found = [(p.get(number_key), p) for p in parts if isinstance(p, dict)]
    return sorted((n, p) for n, p in found if isinstance(n, int))


def _resolve_legs(rules: tuple[Rule, ...], case_id: str, case: Mapping[str, JSON], lookups: Lookups) -> Outcome:
    verdicts = [(n, first_verdict(rules, _request(case_id, case, leg, lookups)))
                for n, leg in _parts(case, "legs", "leg")]
    for number, verdict in verdicts:
        if verdict.action == "approve":
            return Outcome("legs", leg=number)
    lead = verdicts[0][1] if verdicts else Verdict("approve")
    accepted = sorted({v.reason for _, v in verdicts if v.action == lead.action and v.reason})
    return Outcome("legs", verdict=lead, accepted=tuple(accepted))


def resolve(rules: tuple[Rule, ...], case_id: str, case: Mapping[str, JSON], lookups: Lookups) -> Outcome:
    form = case_form(case)
    if form == "legs":
        return _resolve_legs(rules, case_id, case, lookups)
    if form == "batch":
        lines = tuple((n, first_verdict(rules, _request(case_id, case, line, lookups)))
                      for n, line in _parts(case, "lines", "line"))
        return Outcome("batch", lines=lines)
    return Outcome("single", verdict=first_verdict(rules, _request(case_id, case, case, lookups)))


def decision_call(case_id: str, outcome: Outcome) -> tuple[str, dict[str, JSON]]:
    """The one decision tool call that carries out an outcome."""
    if outcome.form == "batch":
        decisions: list[JSON] = [
            {"line": n, "action": v.action} if v.action == "approve"
            else {"line": n, "action": v.action, "reason": v.reason}
            for n, v in outcome.lines
        ]
        return "decide_batch", {"case_id": case_id, "decisions": decisions}
    if outcome.leg is not None:
        return "execute_leg", {"case_id": case_id, "leg": outcome.leg}
    verdict = outcome.verdict
    if verdict.action == "approve":
        return "approve_case", {"case_id": case_id}
    return f"{verdict.action}_case", {"case_id": case_id, "reason": verdict.reason}


def same_graded_state(gold: Outcome, other: Outcome) -> bool:
    """Would `other`, carried out, leave the case in the graded state `gold` leaves it in?"""
    if gold.form != other.form or gold.lines != other.lines or gold.leg != other.leg:
        return False
    if gold.verdict == other.verdict:
        return True
    return (gold.verdict.action == other.verdict.action and len(gold.accepted) > 0
            and other.verdict.reason in gold.accepted)

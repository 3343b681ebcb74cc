"""Banking requests as the tabular learner models them: one `Unit` per decidable request (a case, a ranked
alternative or a batch line) with its observable features and its label, read off an episode's tool
calls; the schema's vocabulary (families, reasons, condition shapes) and what each reason code means.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from methods.tabular.common import Call, as_int, cents, lookups
from simulators.domains.banking.vocabulary import APPROVE as APPROVE_VERDICT
from simulators.domains.banking.vocabulary import CONDITIONS as SCHEMA
from simulators.domains.banking.vocabulary import FEATURES, KIND_BY_PREFIX, REASON_CODES
from simulators.protocol import JSON

__all__ = ["APPROVE", "CATEGORICAL", "CONDITION", "DECISIONS", "FEATURE", "HINTS", "KINDS", "LABEL_HORIZON",
           "MAX_GUESSES", "MAX_NEW_RULES", "MAX_UNITS", "NEW_ORDER", "OPEN_HORIZON", "OVER", "REASONS",
           "RELAX_ORDER", "SCHEMA", "SEED_HORIZON", "UNDER", "Hint", "Unit", "less_risky", "part_unit",
           "read_episode"]

KINDS: dict[str, str] = KIND_BY_PREFIX
REASONS: tuple[str, ...] = REASON_CODES
APPROVE = APPROVE_VERDICT.label
DECISIONS = ("approve_case", "deny_case", "escalate_case", "execute_leg", "decide_batch")

CONDITION: dict[str, str] = {c.feature: c.name for c in SCHEMA.values() if c.feature != "payee_id"}
"""Modelled feature -> the schema's condition on it (payee ids are not modelled: a rule naming them is
kept exactly as documented)."""
FEATURE = {condition: feature for feature, condition in CONDITION.items()}


def _of_shape(shape: str) -> dict[str, tuple[str, ...]]:
    return {kind: tuple(f for f in features if f in CONDITION and SCHEMA[CONDITION[f]].shape == shape)
            for kind, features in FEATURES.items()}


CATEGORICAL: dict[str, tuple[str, ...]] = _of_shape("one_of")
OVER: dict[str, tuple[str, ...]] = _of_shape("over")
UNDER: dict[str, tuple[str, ...]] = _of_shape("under")
RELAX_ORDER = ("tenure", "payee_age", "total", "amount", "standing", "verification", "region", "flags", "category")
"""The order in which a new rule's conditions are dropped or loosened: incidental ones first."""

MAX_UNITS = 160
"""Labelled requests kept per decision family."""
OPEN_HORIZON = 100
"""Stream positions a request that scored 0 keeps steering exploration."""
LABEL_HORIZON = 250
"""Stream positions a scored decision is remembered: about two and a half windows of the suite."""
SEED_HORIZON = 80
"""Only requests this recent seed new rules, so a rule outlived by drift is not rebuilt from old labels."""
MAX_GUESSES = 2
"""Decisions a request may have failed with and still be guessed for; past that it only counts against
the decisions it failed with (a rarer cause is left to requests that show it more plainly)."""
MAX_NEW_RULES = 4
"""New rules per slot."""
NEW_ORDER = -100
"""Checking order of learned rules for undocumented slots: before every documented rule."""


@dataclass(frozen=True)
class Hint:
    """What a reason code means (the workflow guide's reason list): which family it belongs to, the
    action it usually comes with, which requests it could concern, and when an approval rules it out
    for another request (the approval shares what the reason looks at and is no less risky)."""

    kind: str
    action: str
    fits: Callable[[Unit], bool]
    rules_out: Callable[[Unit, Unit], bool]
    """(approved request, request in question) -> the reason cannot be why the second one failed."""


def _same(*features: str) -> Callable[[Unit, Unit], bool]:
    return lambda w, u: all(w.text(f) == u.text(f) for f in features)


HINTS: dict[str, Hint] = {
    "corridor_blocked": Hint("card_transaction", "deny", lambda u: u.region == "overseas",
                             _same("region", "category")),
    "verification_required": Hint("card_transaction", "deny", lambda u: u.verification == "basic",
                                  lambda w, u: _same("verification", "category")(w, u) and w.amount >= u.amount),
    "over_limit": Hint("card_transaction", "escalate", lambda u: False,
                       lambda w, u: w.category == u.category and w.amount >= u.amount),
    "daily_cap": Hint("card_transaction", "escalate", lambda u: True, lambda w, u: w.total >= u.total),
    "account_standing": Hint("limit_increase", "deny", lambda u: u.standing != "good", _same("standing")),
    "cap_exceeded": Hint("limit_increase", "deny", lambda u: True,
                         lambda w, u: w.amount >= u.amount and w.tenure <= u.tenure),
    "restricted_payee": Hint("outbound_transfer", "deny", lambda u: bool(u.flags),
                             lambda w, u: w.flags == u.flags and w.amount >= u.amount),
    "new_payee_review": Hint("outbound_transfer", "escalate", lambda u: 0 <= u.payee_age < 9_000,
                             lambda w, u: 0 <= w.payee_age <= u.payee_age and w.amount >= u.amount),
    "reportable_amount": Hint("outbound_transfer", "escalate", lambda u: True, lambda w, u: w.amount >= u.amount),
}





@dataclass
class Unit:
    """One decidable request (a case, one ranked alternative, or one batch line) and its label.

    Money is in cents, tenure and payee age in hundredths; `payee_age` is -1 when there is no payee."""

    t: int
    kind: str
    category: str
    region: str
    verification: str
    standing: str
    flags: str
    amount: int
    total: int
    tenure: int
    payee_age: int
    gold: str = ""
    """The decision that scored 100 ("approve", "deny:<reason>", "escalate:<reason>"), "" if unknown."""
    excluded: list[str] = field(default_factory=list)
    """Decisions that scored 0."""
    hint: str = ""
    """For an alternative known only not to be approvable: the refusal the learned rules gave it."""

    def to_json(self) -> JSON:
        return [self.t, self.kind, self.category, self.region, self.verification, self.standing, self.flags,
                self.amount, self.total, self.tenure, self.payee_age, self.gold, sorted(self.excluded), self.hint]

    @classmethod
    def from_json(cls, raw: JSON) -> Unit:
        t, kind, category, region, verification, standing, flags, amount, total, tenure, payee_age, gold, excluded, \
            hint = raw
        return cls(int(t), str(kind), str(category), str(region), str(verification), str(standing), str(flags),
                   int(amount), int(total), int(tenure), int(payee_age), str(gold), [str(e) for e in excluded],
                   str(hint))

    def signature(self) -> tuple[str, ...]:
        return self.kind, self.category, self.region, self.verification, self.standing, self.flags

    def text(self, feature: str) -> str:
        return str(getattr(self, feature))

    def number(self, feature: str) -> int:
        return int(getattr(self, feature))


def less_risky(a: Unit, b: Unit) -> bool:
    """Every threshold condition of the family that fires on `a` fires on `b` too (categorical features
    aside): no larger on the "over" scales, no smaller on the "under" ones."""
    return all(a.number(f) <= b.number(f) for f in OVER[a.kind]) and all(
        a.number(f) >= b.number(f) or a.number(f) < 0 or b.number(f) < 0 for f in UNDER[a.kind])




Parts = list[tuple[int, dict[str, JSON]]]
"""(part number, features) of each decidable request of an episode."""


def read_episode(calls: Sequence[Call]) -> tuple[str, Parts, tuple[str, Mapping[str, JSON]]] | None:
    """(family, [(part number, features)], decision call) of an episode, or None."""
    case: dict[str, JSON] | None = None
    account: dict[str, JSON] = {}
    merchant: dict[str, JSON] = {}
    payees: dict[str, dict[str, JSON]] = {}
    decision, looked_up = lookups(calls, DECISIONS)
    for call, found in looked_up:
        if call.name == "get_case_details" and case is None:
            case = found
        elif call.name == "get_account_details":
            account = found
        elif call.name == "get_merchant_details":
            merchant = found
        elif call.name == "get_payee_details":
            payees[str(call.arguments.get("payee_id"))] = found
    if case is None or decision is None or decision.failed:
        return None
    kind = KINDS.get(str(case.get("case_id", "")).split("-", 1)[0])
    if kind is None:
        return None
    today = account.get("today_total", case.get("same_day_approved_total", 0.0))
    common: dict[str, JSON] = {
        "category": merchant.get("category", ""), "region": merchant.get("region", ""),
        "verification": account.get("verification", ""), "standing": account.get("standing", ""),
        "tenure": account.get("tenure_years", 0), "today": today,
    }
    key = "lines" if case.get("lines") else "legs" if case.get("legs") else ""
    raw_parts = [(as_int(p.get("line" if key == "lines" else "leg"), -1), p)
                 for p in case.get(key, []) if isinstance(p, dict)] if key else [(0, case)]
    parts = []
    for number, part in sorted(raw_parts, key=lambda item: item[0]):
        amount = part.get("requested", part.get("requested_limit", part.get("amount")))
        payee_id = part.get("payee_id", case.get("payee_id"))
        payee = payees.get(str(payee_id), {}) if isinstance(payee_id, str) else {}
        restrictions = payee.get("restrictions", [])
        parts.append((number, {**common, "amount": amount, "has_payee": isinstance(payee_id, str),
                               "payee_age": part.get("payee_added_days_ago", payee.get("added_days_ago")),
                               "flags": "+".join(sorted(str(r) for r in restrictions))
                               if isinstance(restrictions, list) else ""}))
    return kind, parts, (decision.name, decision.arguments)


def part_unit(position: int, kind: str, part: tuple[int, dict[str, JSON]]) -> tuple[int, Unit]:
    number, f = part
    amount = cents(f["amount"]) or 0
    today = cents(f["today"]) or 0
    payee_age = cents(f["payee_age"]) if f["has_payee"] else None
    return number, Unit(position, kind, str(f["category"]), str(f["region"]), str(f["verification"]),
                        str(f["standing"]), str(f["flags"]), amount, today + amount, cents(f["tenure"]) or 0,
                        payee_age if payee_age is not None else -1)

"""Banking adapter: which decision and reason each kind of request gets, and where the amounts tip over.

The banking schema (simulators/domains/banking/vocabulary.py, whose conditions, reader and `Verdict`
this adapter uses rather than restating them) decides a request by the first matching rule
(deny or escalate with a reason), else approves it. The table here is a list of labelled requests per
decision family (card transaction, limit increase, outbound transfer): their observable features
(merchant category and region, verification, standing, payee flags; amount, today's total + amount,
tenure, payee age) and either the decision that scored 100, or the decisions that scored 0. Single
cases and batch lines label themselves; of ranked alternatives, the one carried out is approvable and
the ones before it are not.

From the labels, each decision slot (action + reason) gets rules in the schema:
- a documented rule keeps its conditions and moves its numeric boundaries to where the labels put them
  (between the largest value that must not fire and the smallest that must: the documented value when
  it still separates them, else the roundest number in the gap), or is switched off when it only
  catches requests that must not get its decision;
- requests of a slot no rule covers seed new rules: the most specific conditions describing the
  request, then relaxed (dropped, or a boundary moved) while no counter-example is caught. The amount
  is never dropped: with nothing below, its boundary sits just under the smallest positive.
Exploration: a request that scored 0 gets a tentative label, the first untried decision in a plausible
order (the refusal the rules gave it; approval when a refusal failed; a documented rule whose boundary
may have moved; then reasons whose meaning fits the request and that no approval rules out). Rules
built on guesses stay within the kinds of request guessed the same way; the next such request's score
confirms the guess (and the rule generalises) or refutes it for every similar, less risky request too.
Drift: a new label removes older ones it contradicts outright; boundaries are drawn newest label first,
an older label that contradicts newer ones being skipped once enough newer labels agree (else the clash
is read as structure: another rule or condition); labels are forgotten after LABEL_HORIZON positions,
and only recent requests seed new rules (a lifted rule is not rebuilt from its old positives).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from methods.tabular.common import Call, as_int, calls_of, cents, documented_rules, lookups, roundest_between
from simulators.domains.banking.vocabulary import APPROVE as APPROVE_VERDICT
from simulators.domains.banking.vocabulary import CONDITIONS as SCHEMA
from simulators.domains.banking.vocabulary import FEATURES, KIND_BY_PREFIX, REASON_CODES, Verdict, holds, read_rule
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["BankingAdapter", "Rule", "Unit", "best_threshold", "matches"]

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


# ---------------------------------------------------------------------------------------------- units


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


# ---------------------------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Rule:
    slot: str
    kind: str
    order: float
    cats: Mapping[str, frozenset[str]] = field(default_factory=dict)
    over: Mapping[str, int] = field(default_factory=dict)
    under: Mapping[str, int] = field(default_factory=dict)
    rule_id: str = ""
    """The documented rule it revises, "" for a new one."""
    enabled: bool = True
    opaque: bool = False
    """Conditions this adapter cannot evaluate: the rule is left exactly as documented."""

    def without(self, feature: str) -> Rule:
        return replace(self, cats={f: v for f, v in self.cats.items() if f != feature},
                       over={f: v for f, v in self.over.items() if f != feature},
                       under={f: v for f, v in self.under.items() if f != feature})

    def features(self) -> list[str]:
        return [*self.cats, *self.over, *self.under]

    def to_json(self) -> dict[str, JSON]:
        when: dict[str, JSON] = {}
        for feature in (*CATEGORICAL[self.kind], "amount", "total", "tenure", "payee_age"):
            if feature in self.cats:
                when[CONDITION[feature]] = sorted(self.cats[feature])
            elif feature in self.over:
                when[CONDITION[feature]] = self.over[feature] / 100
            elif feature in self.under:
                when[CONDITION[feature]] = self.under[feature] / 100
        verdict = Verdict.from_label(self.slot)
        rule: dict[str, JSON] = {"applies_to": self.kind, "order": self.order, "when": when,
                                 "action": verdict.action, "reason": verdict.reason or ""}
        if not self.enabled:
            rule["enabled"] = False
        return rule


def matches(rule: Rule, unit: Unit) -> bool:
    """The schema's own test (`vocabulary.holds`) on the unit's features; a payee age of -1 is no payee."""
    if not rule.enabled or rule.opaque or rule.kind != unit.kind:
        return False
    for feature, allowed in rule.cats.items():
        actual: JSON = [f for f in unit.flags.split("+") if f] if feature == "flags" else unit.text(feature)
        if not holds(SCHEMA[CONDITION[feature]], actual, allowed):
            return False
    for feature, bound in (*rule.over.items(), *rule.under.items()):
        value = unit.number(feature)
        if not holds(SCHEMA[CONDITION[feature]], None if feature in UNDER[unit.kind] and value < 0 else value,
                     bound):
            return False
    return True


def _parse_rule(rule_id: str, raw: JSON) -> Rule | None:
    """A documented rule through the schema's reader (`vocabulary.read_rule`), its conditions split by
    shape; one this adapter cannot evaluate (disabled, unknown or unmodelled condition, malformed
    bound) is opaque: kept exactly as documented."""
    text = read_rule(rule_id, raw)
    if text is None:
        return None
    cats: dict[str, frozenset[str]] = {}
    over: dict[str, int] = {}
    under: dict[str, int] = {}
    opaque = not text.enabled
    for condition, value in text.when.items():
        feature = FEATURE.get(str(condition))
        shape = SCHEMA[CONDITION[feature]].shape if feature is not None else ""
        number = cents(value)
        if shape == "one_of" and isinstance(value, list):
            cats[str(feature)] = frozenset(str(v) for v in value)
        elif shape == "over" and number is not None:
            over[str(feature)] = number
        elif shape == "under" and number is not None:
            under[str(feature)] = number
        else:
            opaque = True
    return Rule(text.verdict.label, text.applies_to, text.order, cats, over, under, rule_id, True, opaque)


DRIFT_CONFIRM = 6
"""Consistent labels needed after the newest contradicted one before a boundary follows the newer labels
across older ones that contradict them (a drift), rather than treating the clash as structure."""


def best_threshold(positives: Sequence[tuple[int, int]], negatives: Sequence[tuple[int, int]],
                   current: int | None) -> int | None:
    """A boundary X for "fires when value > X" from (position, value) labels: positives must fire,
    negatives must not.

    Newest first, each label narrows the gap [largest negative, smallest positive); an older label that
    contradicts the newer ones is skipped (drift). When fewer than DRIFT_CONFIRM labels followed the
    newest contradicted one, the clash is more likely structure (another rule, another condition) than
    drift, and the negatives win: the boundary stays above all of them. The current boundary is kept
    when it lies in the gap, else the roundest number in it."""
    if not positives and not negatives:
        return current
    labels = sorted([(t, 1, v) for t, v in positives] + [(t, 0, v) for t, v in negatives],
                    key=lambda item: (-item[0], -item[1], item[2]))
    low: int | None = None
    high: int | None = None
    newest_skip: int | None = None
    kept_after = 0
    for t, positive, value in labels:
        if positive:
            if low is not None and value <= low:
                newest_skip = t if newest_skip is None else newest_skip
                continue
            high = value if high is None else min(high, value)
        else:
            if high is not None and value >= high:
                newest_skip = t if newest_skip is None else newest_skip
                continue
            low = value if low is None else max(low, value)
        if newest_skip is None:
            kept_after += 1
    if newest_skip is not None and kept_after < DRIFT_CONFIRM:
        low = max((v for _, v in negatives), default=None)
        high = min((v for _, v in positives if low is None or v > low), default=None)
    if current is not None and (low is None or current >= low) and (high is None or current < high):
        return current
    if low is None:
        assert high is not None
        return roundest_between(max(0, high - max(high // 5, 1)), high)
    if high is None:
        return roundest_between(low, low + max(low // 5, 100))
    return roundest_between(low, high)


STRUCTURE_MIN = 3
"""Counter-examples needed before a positive is read as structure (another rule) rather than drift."""


def _structural(rule: Rule, feature: str, positive: Unit, negatives: Sequence[Unit]) -> bool:
    """A positive below several negatives on `feature`, and below all of them on a tenure or payee-age
    scale the rule does not test, belongs to another rule (a new-account cap, say), not to this boundary."""
    if feature not in rule.over:
        return False
    clashing = [n for n in negatives if n.number(feature) >= positive.number(feature)]
    if len(clashing) < STRUCTURE_MIN:
        return False
    for scale in UNDER[rule.kind]:
        if scale in rule.under or positive.number(scale) < 0:
            continue
        if all(positive.number(scale) < n.number(scale) for n in clashing):
            return True
    return False


def _threshold(rule: Rule, feature: str, positives: Sequence[Unit], negatives: Sequence[Unit],
               keep: bool = True) -> Rule:
    """Move one boundary of the rule to where the labels in its scope put it; `keep` prefers the current
    boundary (a documented one) while it still separates them."""
    rest = rule.without(feature)
    in_scope = [u for u in negatives if matches(rest, u)]
    pos = [(u.t, u.number(feature)) for u in positives
           if matches(rest, u) and not _structural(rule, feature, u, in_scope)]
    neg = [(u.t, u.number(feature)) for u in in_scope]
    if feature in UNDER[rule.kind]:
        current = rule.under.get(feature) if keep else None
        # "value < T" is "-value > -T": reuse the "over" search on negated values.
        found = best_threshold([(t, -v) for t, v in pos if v >= 0], [(t, -v) for t, v in neg if v >= 0],
                               -current if current is not None else None)
        if found is None:
            return rule
        return replace(rule, under={**rule.under, feature: -found})
    found = best_threshold(pos, neg, rule.over.get(feature) if keep else None)
    if found is None:
        return rule
    return replace(rule, over={**rule.over, feature: found})


def _adjust(rule: Rule, positives: Sequence[Unit], negatives: Sequence[Unit]) -> Rule:
    for _ in range(2):
        for feature in sorted([*rule.over, *rule.under]):
            rule = _threshold(rule, feature, positives, negatives)
    return rule


def _specific(seed: Unit, slot: str, order: float) -> Rule:
    kind = seed.kind
    cats = {f: frozenset({seed.text(f)}) for f in CATEGORICAL[kind] if f != "flags" and seed.text(f)}
    if "flags" in CATEGORICAL[kind] and seed.flags:
        cats["flags"] = frozenset(seed.flags.split("+"))
    over = {f: seed.number(f) - 1 for f in OVER[kind]}
    under = {f: seed.number(f) + 1 for f in UNDER[kind] if seed.number(f) >= 0}
    return Rule(slot, kind, order, cats, over, under)


def _fresh(positives: Sequence[Unit], negatives: Sequence[Unit]) -> list[Unit]:
    """Negatives no newer positive contradicts outright (same categorical features, no riskier on any
    scale): an approval from before a rule came into force is not a counter-example to it."""
    return [n for n in negatives
            if not any(p.t > n.t and p.signature() == n.signature() and less_risky(p, n) for p in positives)]


def _catches(rule: Rule, negatives: Sequence[Unit]) -> bool:
    return any(matches(rule, n) for n in negatives)


def _outdated(rule: Rule, seed: Unit, negatives: Sequence[Unit]) -> bool:
    """A newer negative within the rule's categorical scope, no less risky than the seed on the rule's
    scales, says the seed's decision no longer holds (the rule it stood for was lifted)."""
    scope = replace(rule, over={}, under={})
    return any(n.t > seed.t and matches(scope, n)
               and all(n.number(f) >= seed.number(f) for f in rule.over)
               and all(0 <= n.number(f) <= seed.number(f) for f in rule.under) for n in negatives)


def _relax(rule: Rule, positives: Sequence[Unit], negatives: Sequence[Unit], keep: bool = False) -> Rule:
    """Drop or loosen the conditions of a most specific rule while it catches no negative; `keep` keeps
    every categorical condition (a rule built on a guess stays within the guessed request's cell)."""
    for feature in RELAX_ORDER:
        if feature not in rule.features():
            continue
        trial = rule.without(feature)
        # The amount is what every rule weighs: with no counter-example below it, its boundary still
        # sits just under the smallest positive (where a policy would round it), not at zero.
        droppable = feature != "amount" and not (keep and feature in rule.cats)
        if droppable and not _catches(trial, negatives):
            rule = trial
        elif feature in rule.over or feature in rule.under:
            rule = _threshold(rule, feature, positives, negatives, keep=False)
    return rule


# ---------------------------------------------------------------------------------------------- adapter


class BankingAdapter:
    def __init__(self) -> None:
        self.units: dict[str, list[Unit]] = {kind: [] for kind in KINDS.values()}
        self.documented: dict[str, JSON] = {}
        self._doc: list[Rule] = []
        self._rules: dict[str, list[Rule]] = {}

    # ------------------------------------------------------------------------------------ state

    def state(self) -> JSON:
        return {"documented": self.documented,
                "units": {kind: [u.to_json() for u in units] for kind, units in sorted(self.units.items())}}

    def load(self, state: JSON) -> None:
        self.units = {kind: [] for kind in KINDS.values()}
        for kind, units in state.get("units", {}).items():
            self.units[str(kind)] = [Unit.from_json(u) for u in units]
        self._set_documented(state.get("documented", {}))

    def _set_documented(self, policy: Mapping[str, JSON]) -> None:
        self.documented = {str(k): v for k, v in sorted(policy.items())}
        self._doc = [rule for rule_id, raw in self.documented.items() if (rule := _parse_rule(rule_id, raw))]
        self._rules = {kind: self._induce(kind) for kind in self.units}

    # ------------------------------------------------------------------------------------ slots

    def _doc_slots(self, kind: str) -> dict[str, float]:
        slots: dict[str, float] = {}
        for rule in self._doc:
            if rule.kind == kind and not rule.opaque:
                slots[rule.slot] = min(slots.get(rule.slot, rule.order), rule.order)
        return slots

    def _order(self, slot: str, kind: str) -> float:
        documented = self._doc_slots(kind)
        if slot in documented:
            return documented[slot]
        reason = Verdict.from_label(slot).reason or ""
        return float(NEW_ORDER + (REASONS.index(reason) if reason in REASONS else len(REASONS)))

    def _candidates(self, unit: Unit) -> list[str]:
        """Decisions to try for a request whose decision is unknown, most plausible first: the refusal
        the rules gave it (an alternative known not to be approvable), approval (after a failed refusal),
        a documented rule whose boundary may have moved, then reasons whose meaning fits the request;
        among equals, the decisions that scored most often lately."""
        scored: dict[str, int] = {}
        for other in self.units.get(unit.kind, []):
            if other.gold:
                scored[other.gold] = scored.get(other.gold, 0) + 1
        ranked: list[tuple[int, int, int, str]] = []
        if unit.hint:
            ranked.append((-1, 0, 0, unit.hint))
        if any(e != APPROVE for e in unit.excluded):
            ranked.append((0, 0, 0, APPROVE))
        doc_actions = {v.reason: v.action for v in (Verdict.from_label(rule.slot) for rule in self._doc)}
        for index, rule in enumerate(self._doc):
            # A documented rule whose amount boundary may have moved below this request.
            if rule.kind == unit.kind and not rule.opaque and matches(replace(rule, over={}), unit):
                ranked.append((1, -scored.get(rule.slot, 0), index, rule.slot))
        approved = [w for w in self.units.get(unit.kind, []) if w.gold == APPROVE]
        for index, (reason, hint) in enumerate(HINTS.items()):
            if hint.kind != unit.kind:
                continue
            slot = Verdict(doc_actions.get(reason, hint.action), reason).label
            against = [w.t > unit.t for w in approved if hint.rules_out(w, unit)]
            # Ruled out by a later approval: last. By an earlier one (perhaps before a drift): after the
            # reasons nothing rules out.
            rank = 5 if any(against) else (2 if hint.fits(unit) else 3) + (1 if against else 0)
            ranked.append((rank, -scored.get(slot, 0), index, slot))
        seen: list[str] = []
        for *_, slot in sorted(ranked):
            if slot not in seen:
                seen.append(slot)
        return seen

    def _label(self, unit: Unit) -> str:
        if unit.gold:
            return unit.gold
        if not unit.excluded or len(unit.excluded) > MAX_GUESSES:
            return ""
        return next((c for c in self._candidates(unit) if c not in unit.excluded), "")

    # ------------------------------------------------------------------------------------ induction

    def _induce(self, kind: str) -> list[Rule]:
        labelled = [(u, label) for u in self.units.get(kind, []) if (label := self._label(u))]
        slots = dict(self._doc_slots(kind))
        for _, label in labelled:
            if label != APPROVE and label not in slots:
                slots[label] = self._order(label, kind)
        rules: list[Rule] = []
        for slot, order in sorted(slots.items(), key=lambda item: (item[1], item[0])):
            positives = [u for u, label in labelled if label == slot]
            negatives = [u for u, label in labelled
                         if label == APPROVE or slot in u.excluded
                         or (label != slot and self._order(label, kind) > order)]
            rules += self._induce_slot(kind, slot, order, positives, negatives)
        return rules

    def _induce_slot(self, kind: str, slot: str, order: float, positives: list[Unit],
                     negatives: list[Unit]) -> list[Rule]:
        rules: list[Rule] = []
        remaining = list(positives)
        for documented in (r for r in self._doc if r.kind == kind and r.slot == slot):
            if documented.opaque:
                rules.append(documented)
                continue
            rule = _adjust(documented, positives, negatives)
            if not any(matches(rule, p) for p in positives) and any(matches(rule, n) for n in negatives):
                rule = replace(rule, enabled=False)
            rules.append(rule)
            remaining = [p for p in remaining if not matches(rule, p)]
        newest = max((u.t for u in [*positives, *negatives]), default=0)
        remaining = sorted((p for p in remaining if p.t >= newest - SEED_HORIZON), key=lambda u: -u.t)
        negatives = _fresh(positives, negatives)
        learned = 0
        while remaining and learned < MAX_NEW_RULES:
            seed = remaining.pop(0)
            # Its boundaries are drawn between the positives no earlier rule explains and the negatives. A
            # guess (a tentative label) stays within the kinds of request guessed the same way until a
            # score confirms it.
            specific = _specific(seed, slot, order + learned / 100)
            if not seed.gold:
                guesses = [p for p in remaining if not p.gold]
                specific = replace(specific, cats={f: values | {g.text(f) for g in guesses}
                                                   for f, values in specific.cats.items() if f != "flags"}
                                   | {f: v for f, v in specific.cats.items() if f == "flags"})
            rule = _relax(specific, [seed, *remaining], negatives, keep=not seed.gold)
            if _catches(rule, negatives) or not matches(rule, seed) or _outdated(rule, seed, negatives):
                continue
            rules.append(rule)
            learned += 1
            remaining = [p for p in remaining if not matches(rule, p)]
        return rules

    def _decide(self, unit: Unit) -> tuple[str, Rule | None]:
        rules = sorted(self._rules.get(unit.kind, []), key=lambda r: (r.order, r.rule_id))
        for rule in rules:
            if matches(rule, unit):
                return rule.slot, rule
        return APPROVE, None

    # ------------------------------------------------------------------------------------ learning

    def learn(self, record: EpisodeRecord) -> None:
        calls = calls_of(record)
        documented = documented_rules(calls)
        if documented and documented != self.documented:
            self._set_documented(documented)
        episode = _read(calls)
        if episode is None:
            return
        kind, parts, decision = episode
        units = [_unit(record.position, kind, part) for part in parts]
        success = record.reward >= 0.999
        name, arguments = decision
        if name == "decide_batch":
            if success:
                decided = {as_int(d.get("line")): _slot(d.get("action"), d.get("reason"))
                           for d in arguments.get("decisions", []) if isinstance(d, dict)}
                for number, unit in units:
                    if number in decided:
                        self._confirm(unit, decided[number])
        elif name == "execute_leg":
            chosen = as_int(arguments.get("leg"), -1)
            numbers = [number for number, _ in units]
            if chosen not in numbers:
                return
            if success:
                for number, unit in units:
                    if number == chosen:
                        self._confirm(unit, APPROVE)
                    elif number < chosen:
                        unit.hint = self._decide(unit)[0]
                        self._refute(unit, APPROVE, propagate=False)
            elif chosen == numbers[0]:
                self._refute(units[0][1], APPROVE)
        else:
            slot = APPROVE if name == "approve_case" else _slot(name.removesuffix("_case"), arguments.get("reason"))
            if len(units) == 1:
                if success:
                    self._confirm(units[0][1], slot)
                else:
                    self._refute(units[0][1], slot)
            elif success:
                self._confirm(units[0][1], slot)
                for _, unit in units[1:]:
                    unit.hint = self._decide(unit)[0]
                    self._refute(unit, APPROVE, propagate=False)
        self._rules[kind] = self._induce(kind)

    def _confirm(self, unit: Unit, slot: str) -> None:
        unit.gold = slot
        kept = []
        for old in self.units[unit.kind]:
            if old.signature() == unit.signature() and _contradicts(unit, old):
                continue
            kept.append(old)
        self._store(kept, unit)

    def _refute(self, unit: Unit, slot: str, propagate: bool = True) -> None:
        """`slot` scored 0 on `unit`. Tentative labels giving `slot` to similar requests that are no
        riskier (or, for an approval, no less risky) fall with it; the unit inherits what they had
        already ruled out."""
        excluded = {slot}
        if propagate:
            for old in self.units[unit.kind]:
                if old.gold or self._label(old) != slot:
                    continue
                if old.signature() != unit.signature():
                    continue
                refuted = less_risky(unit, old) if slot == APPROVE else less_risky(old, unit)
                if refuted:
                    excluded |= set(old.excluded)
                    old.excluded = sorted(set(old.excluded) | {slot})
        unit.excluded = sorted(excluded)
        self._store(list(self.units[unit.kind]), unit)

    def _store(self, kept: list[Unit], unit: Unit) -> None:
        kept = [u for u in kept if u.t >= unit.t - (LABEL_HORIZON if u.gold else OPEN_HORIZON)]
        kept.append(unit)
        self.units[unit.kind] = kept[-MAX_UNITS:]

    # ------------------------------------------------------------------------------------ rendering

    def rules(self) -> dict[str, JSON]:
        block: dict[str, JSON] = {}
        documented = {rule.rule_id: rule for rule in self._doc}
        for kind in sorted(self._rules):
            learned = 0
            for rule in self._rules[kind]:
                if rule.rule_id:
                    if rule != documented.get(rule.rule_id):
                        raw = self.documented.get(rule.rule_id)
                        block[rule.rule_id] = {**raw, "enabled": False} if not rule.enabled and isinstance(
                            raw, dict) else rule.to_json()
                    continue
                learned += 1
                block[f"learned_{kind}_{rule.slot.replace(':', '_')}_{learned}"] = rule.to_json()
        return block

    def context(self, task: TaskView) -> dict[str, JSON]:
        return self.rules()


def _contradicts(new: Unit, old: Unit) -> bool:
    """Threshold rules are monotone in risk: a request approved now means every less risky one is
    approved, and a request refused now means every riskier one is not approved."""
    if new.gold == APPROVE:
        return (old.gold not in ("", APPROVE) and less_risky(old, new)) or (
            not old.gold and APPROVE in old.excluded and less_risky(old, new))
    return old.gold == APPROVE and less_risky(new, old)


def _slot(action: JSON, reason: JSON) -> str:
    if action == APPROVE:
        return APPROVE
    return Verdict(str(action), str(reason)).label


# ---------------------------------------------------------------------------------------------- reading


def _read(calls: Sequence[Call]) -> tuple[str, list[tuple[int, dict[str, JSON]]], tuple[str, Mapping[str, JSON]]] \
        | None:
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


def _unit(position: int, kind: str, part: tuple[int, dict[str, JSON]]) -> tuple[int, Unit]:
    number, f = part
    amount = cents(f["amount"]) or 0
    today = cents(f["today"]) or 0
    payee_age = cents(f["payee_age"]) if f["has_payee"] else None
    return number, Unit(position, kind, str(f["category"]), str(f["region"]), str(f["verification"]),
                        str(f["standing"]), str(f["flags"]), amount, today + amount, cents(f["tenure"]) or 0,
                        payee_age if payee_age is not None else -1)

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

from collections.abc import Mapping
from dataclasses import replace

from methods.tabular.banking_rules import (
    Rule,
    adjust_bounds,
    catches,
    fresh_negatives,
    matches,
    most_specific_rule,
    outdated,
    parse_rule,
    relax,
)
from methods.tabular.banking_units import (
    APPROVE,
    HINTS,
    KINDS,
    LABEL_HORIZON,
    MAX_GUESSES,
    MAX_NEW_RULES,
    MAX_UNITS,
    NEW_ORDER,
    OPEN_HORIZON,
    REASONS,
    SEED_HORIZON,
    Unit,
    less_risky,
    part_unit,
    read_episode,
)
from methods.tabular.common import as_int, calls_of, documented_rules
from simulators.domains.banking.vocabulary import Verdict
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["BankingAdapter"]



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
        self._doc = [rule for rule_id, raw in self.documented.items() if (rule := parse_rule(rule_id, raw))]
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
            rule = adjust_bounds(documented, positives, negatives)
            if not any(matches(rule, p) for p in positives) and any(matches(rule, n) for n in negatives):
                rule = replace(rule, enabled=False)
            rules.append(rule)
            remaining = [p for p in remaining if not matches(rule, p)]
        newest = max((u.t for u in [*positives, *negatives]), default=0)
        remaining = sorted((p for p in remaining if p.t >= newest - SEED_HORIZON), key=lambda u: -u.t)
        negatives = fresh_negatives(positives, negatives)
        learned = 0
        while remaining and learned < MAX_NEW_RULES:
            seed = remaining.pop(0)
            # Its boundaries are drawn between the positives no earlier rule explains and the negatives. A
            # guess (a tentative label) stays within the kinds of request guessed the same way until a
            # score confirms it.
            specific = most_specific_rule(seed, slot, order + learned / 100)
            if not seed.gold:
                guesses = [p for p in remaining if not p.gold]
                specific = replace(specific, cats={f: values | {g.text(f) for g in guesses}
                                                   for f, values in specific.cats.items() if f != "flags"}
                                   | {f: v for f, v in specific.cats.items() if f == "flags"})
            rule = relax(specific, [seed, *remaining], negatives, keep=not seed.gold)
            if catches(rule, negatives) or not matches(rule, seed) or outdated(rule, seed, negatives):
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
        episode = read_episode(calls)
        if episode is None:
            return
        kind, parts, decision = episode
        units = [part_unit(record.position, kind, part) for part in parts]
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

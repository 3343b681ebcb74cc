"""tabular's beliefs as a person reads them (`shiftbench state`), one short line per belief.

What the adapters keep is built for learning (last-seen positions, tentative labels, solver input);
this reads it back as what the method currently believes and on what evidence: retail, each condition
(operation, attribute, value) it believes refused, and with which code, or allowed against the
documents (the rest only counted); banking,
the labelled cases per decision kind and every rule in force; pitch, the weight each product value is
believed to carry for the current customer. The policy block the method writes into the agent's prompt
is its `context` (`TabularMethod.describe` prints both).
"""

from __future__ import annotations

from methods.tabular.banking import BankingAdapter
from methods.tabular.common import NEVER
from methods.tabular.pitch import PitchAdapter
from methods.tabular.retail import RetailAdapter
from simulators.domains.retail.vocabulary import Condition
from simulators.protocol import JSON

__all__ = ["beliefs"]


def beliefs(adapter: object) -> list[str]:
    """The belief lines of a domain adapter; an empty list when it has learned nothing yet."""
    if isinstance(adapter, RetailAdapter):
        return _retail(adapter)
    if isinstance(adapter, BankingAdapter):
        return _banking(adapter)
    if isinstance(adapter, PitchAdapter):
        return _pitch(adapter)
    return []


def _retail(adapter: RetailAdapter) -> list[str]:
    """Every condition believed refused, and every one believed allowed against the documents; the
    conditions seen allowed as documented are only counted, per operation."""
    lines = []
    quiet: dict[str, int] = {}
    for key, cell in sorted(adapter.cells.items()):
        seen = max(cell.ok, cell.fail, cell.dok, cell.dfail)
        if seen == NEVER:
            continue
        condition = Condition.from_key(key)
        refused = adapter.denied(key)
        documented = adapter._doc_denied(condition.op, condition.attribute, condition.value)
        if not refused and not documented:
            quiet[condition.op] = quiet.get(condition.op, 0) + 1
            continue
        belief = f"refused ({adapter.code(key)})" if refused else "allowed"
        note = "as documented" if refused == documented else "DIFFERS from the documents"
        lines.append(f"{condition.op} when {condition.attribute} = {condition.value}: {belief}, {note}; "
                     f"last evidence at t={seen}")
    if quiet:
        lines.append("seen allowed, as documented: " + ", ".join(
            f"{op} under {count} condition(s)" for op, count in sorted(quiet.items())))
    waiting = sum(len(failures) for failures in adapter.pending.values())
    if waiting:
        lines.append(f"{waiting} failed request(s) whose cause is not pinned down yet")
    return lines


def _banking(adapter: BankingAdapter) -> list[str]:
    lines = []
    for kind, units in sorted(adapter.units.items()):
        if units:
            labelled = sum(1 for unit in units if unit.gold)
            lines.append(f"{kind}: {len(units)} case(s) remembered, {labelled} with a decision that scored")
    in_force = adapter.rules()
    for rule_id, rule in sorted(in_force.items()):
        lines.append(f"rule {rule_id}: {_banking_rule(rule)}")
    return lines


def _banking_rule(rule: JSON) -> str:
    if not isinstance(rule, dict):
        return str(rule)
    if rule.get("enabled") is False:
        return "switched off (the documented rule no longer holds)"
    when = ", ".join(f"{name} {value}" for name, value in sorted(dict(rule.get("when", {})).items()))
    verdict = str(rule.get("action", "")) + (f" ({rule['reason']})" if rule.get("reason") else "")
    return f"{rule.get('applies_to', '')}: {verdict} when {when or 'always'}"


def _pitch(adapter: PitchAdapter) -> list[str]:
    if not adapter.observations and not adapter.library:
        return []
    lines = [f"current customer: {len(adapter.observations)} episode(s) explained"
             + (", recognised as a past customer" if adapter.anchored else "")
             + f"; {len(adapter.library)} past customer(s) remembered"]
    for value, weight in sorted(adapter.weights.items()):
        options = adapter.plausible.get(value, [weight])
        sure = "" if len(options) <= 1 else f" (could be {', '.join(f'{w:+d}' for w in options)})"
        lines.append(f"{value}: {weight:+d}{sure}")
    return lines

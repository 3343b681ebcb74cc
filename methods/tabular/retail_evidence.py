"""What one retail episode tells the tabular learner: the request's legs read by the scripted agent's own
parser, each leg's cells (the schema's conditions it meets), which leg was carried out, refused or
quoted; and the `Cell` record of evidence per (operation, attribute, value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from methods.tabular.common import NEVER, Call, lookups
from simulators.domains.retail.facts import leg_facts as world_leg_facts
from simulators.domains.retail.model import Leg, Records
from simulators.domains.retail.parsing import ParsedLeg, parse_instruction
from simulators.domains.retail.vocabulary import ATTRIBUTES, POLICY_CODES, TOOL_OP, WHOLE_ORDER_OPS, Condition, Facts
from simulators.protocol import JSON
from simulators.record import EpisodeRecord

__all__ = ["Cell", "DocRule", "EpisodeEvidence", "cells_of", "leg_facts"]


# ---------------------------------------------------------------------------------------------- reading
# The request is read by the scripted agent's own parser (`parse_instruction`): it sees only the
# instruction, which the method sees too.


def _dicts(value: JSON) -> list[Mapping[str, JSON]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def leg_facts(leg: ParsedLeg, user: Mapping[str, JSON], order: Mapping[str, JSON],
              products: Mapping[str, Mapping[str, JSON]]) -> Facts | None:
    """attribute -> values, as the schema defines them (`facts.leg_facts`, the world's own reading);
    None when an item is not in the order (the world refuses that, not the policy). An exchange or
    modification is read over the named items the order holds."""
    held = {str(item.get("item_id")) for item in _dicts(order.get("items"))}
    if leg.op in WHOLE_ORDER_OPS:
        scope = tuple(held)
    elif leg.op == "return":
        scope = leg.item_ids
    else:
        scope = tuple(item_id for item_id in leg.item_ids if item_id in held)
    if not scope or any(item_id not in held for item_id in scope):
        return None
    request = Leg(leg.op, leg.order_id, scope, payment_method_id=leg.payment_method_id, reason=leg.reason,
                  address=leg.address)
    return world_leg_facts(request, Records(user, order, products))


def cells_of(op: str, facts: Mapping[str, frozenset[str]]) -> list[str]:
    """The keys (`Condition.key`) of the conditions a request with these facts meets."""
    return [Condition.of(op, attribute, value).key for attribute in ATTRIBUTES
            for value in sorted(facts.get(attribute, ()))]


# ---------------------------------------------------------------------------------------------- cells


@dataclass
class Cell:
    ok: int = NEVER
    """Last seen allowed."""
    fail: int = NEVER
    """Last pinned as the cause of a carried-out request's failure."""
    strong: bool = False
    """The latest pin left no other candidate."""
    dok: int = NEVER
    """Last confirmed refused (a scored refusal, a scored fallback, a scored zero quote)."""
    dfail: int = NEVER
    """Last time a refusal citing it failed and allowing it became the hypothesis."""
    amb: str = ""
    """The code of that refusal, blamed if allowing fails too."""
    code_ok: dict[str, int] = field(default_factory=dict)
    code_fail: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> JSON:
        return [self.ok, self.fail, int(self.strong), self.dok, self.dfail, self.amb,
                dict(sorted(self.code_ok.items())), dict(sorted(self.code_fail.items()))]

    @classmethod
    def from_json(cls, raw: JSON) -> Cell:
        ok, fail, strong, dok, dfail, amb, code_ok, code_fail = raw
        return cls(int(ok), int(fail), bool(strong), int(dok), int(dfail), str(amb),
                   {str(k): int(v) for k, v in code_ok.items()}, {str(k): int(v) for k, v in code_fail.items()})

    def denied(self, documented: bool) -> bool:
        allow = max(self.ok, self.dfail)
        deny = max(self.fail, self.dok)
        if allow == deny == NEVER:
            return documented
        return deny > allow

    def code(self, priors: Sequence[str]) -> str:
        good = [(t, code) for code, t in self.code_ok.items() if t > self.code_fail.get(code, NEVER)]
        if good:
            return max(good)[1]
        order = list(dict.fromkeys([*priors, *POLICY_CODES]))
        earlier = sorted(((t, code) for code, t in self.code_ok.items()), reverse=True)
        if earlier:
            return earlier[0][1]
        untried = [code for code in order if code not in self.code_fail]
        if untried:
            return untried[0]
        return min((self.code_fail[code], code) for code in order)[1]


@dataclass(frozen=True)
class DocRule:
    """A documented rule (read by the vocabulary's `parse_policy`) with its deny list lower-cased once."""

    rule_id: str
    deny: frozenset[str]
    reason: str


# ---------------------------------------------------------------------------------------------- one episode


@dataclass(frozen=True)
class EpisodeEvidence:
    legs: list[tuple[str, list[str]]]
    """(op, cell keys) per leg."""
    carried: int | None = None
    refused: str | None = None
    quote: float | None = None

    @classmethod
    def read(cls, record: EpisodeRecord, calls: Sequence[Call]) -> EpisodeEvidence | None:
        parsed = parse_instruction(record.task.instruction)
        if parsed is None:
            return None
        user: Mapping[str, JSON] = {}
        orders: dict[str, Mapping[str, JSON]] = {}
        products: dict[str, Mapping[str, JSON]] = {}
        write, looked_up = lookups(calls, TOOL_OP)
        for call, record_json in looked_up:
            if call.name == "get_user_details":
                user = record_json
            elif call.name == "get_order_details":
                orders.setdefault(str(call.arguments.get("order_id")), record_json)
            elif call.name == "get_product_details":
                products[str(call.arguments.get("product_id"))] = record_json
        if not user:
            return None
        legs: list[tuple[str, list[str]]] = []
        for leg in parsed.legs:
            order = orders.get(leg.order_id)
            facts = leg_facts(leg, user, order, products) if order else None
            if facts is None:
                return None
            legs.append((leg.op, cells_of(leg.op, facts)))
        finish = record.finish_arguments or {}
        if write is not None:
            if write.failed:
                return None
            op = TOOL_OP[write.name]
            carried = next((i for i, (leg_op, _) in enumerate(legs) if leg_op == op), None)
            return cls(legs, carried=carried) if carried is not None else None
        if parsed.quote:
            answer = finish.get("answer")
            if isinstance(answer, bool) or not isinstance(answer, int | float):
                return None
            return cls(legs[:1], quote=float(answer))
        reason = finish.get("reason")
        if finish.get("decision") == "refuse" and isinstance(reason, str) and reason in POLICY_CODES:
            return cls(legs, refused=reason)
        return None

"""The retail domain: an online store's customer service under a drifting rule book.

Each episode serves one customer message about one order: cancel it, return or exchange items,
change its items, address or payment method, or ask what a return would refund; a message may give
a fallback ("if that is not possible, ..."). The agent looks records up with tools, decides whether
the store's current practice allows the request, and either carries it out or refuses with a code.

Modules: `world` (tools over a copy-on-write episode view: `scope`, `state`, `reads`, and the built-in
`writes` or, for the public export, the reference's `reference_tools` under its `store_config`),
`grader` (gold replay + answer check), `vocabulary` (the public vocabulary and rule schema that methods
import), `facts` and `engine` (what a request is and what must happen to it), `timeline` (documented
and hidden policies per tier and window), `generator` (with `catalog`, `profiles`, `population`,
`recipes`, `wording`, `documents`), `parsing` and `planner` (the scripted agent), `tools` (schemas).

Which semantics a world follows: the built-in suite keeps its own (every write tool mechanically
permissive on every policy dimension, owner-scoped, no fees or caps: its rule book is categorical and
the grade alone tells right from wrong, and its gold answers and quotes are built on that); a world
without `_mechanics` (the public export's `retail_l1..l3`) follows the reference's tools exactly (tier
caps, restocking fees, windows, destinations, split refunds; see `reference_tools`).

Policy block schema (the fenced `shiftbench-policy` JSON object that policy.md ends with, that each
Oracle bulletin ends with, and that learning methods may write): a flat object of rule id -> rule,

    "<op>.<attribute>": {"op": <op>, "attribute": <attribute>, "deny": [<value>, ...], "reason": <code>}

A rule refuses operation `op` when the request's `attribute` takes any value listed in `deny`
(compared case-insensitively); its refusal cites `reason`. An empty `deny` list refuses nothing, and
a rule id that is absent refuses nothing, so a later block overrides an earlier one rule by rule (an
override that lifts a restriction must say `"deny": []`). Ids are conventionally `<op>.<attribute>`;
`op` and `attribute` may be omitted from the body and are then read from the id; a missing `reason`
defaults per attribute (status -> invalid_status, item_class -> final_sale, refund_to / pay_with /
ship_state / new_state -> destination_not_allowed, otherwise service_not_offered). Malformed rules
are ignored.

- op: cancel | return | exchange | modify_items | modify_address | modify_payment
- attributes and their values:
  - status: the order's status (pending, processed, on hold, delivered, cancelled, return requested,
    exchange requested)
  - payment: how the order was paid: credit_card | paypal | gift_card | split (several methods)
  - membership: the customer's tier: bronze | silver | gold
  - reason: the customer's stated reason (cancel: no longer needed | ordered by mistake; return:
    defective | no longer needed | wrong item)
  - category: the category of any item concerned (apparel | electronics | home | beauty | outdoor); for
    cancel and the modify_address / modify_payment operations, every item of the order
  - item_class: regular | clearance, of any item concerned
  - ship_state: the two-letter state the order ships to
  - new_state: the state of the new address (modify_address)
  - refund_to: the return refund's destination: gift_card | original_method (the method of the order's
    first payment) | other_method (another card or PayPal account on file)
  - pay_with: the kind of method paying a difference or the order (exchange, modify_items,
    modify_payment): credit_card | paypal | gift_card
- reason codes: service_not_offered, invalid_status, destination_not_allowed, insufficient_balance,
  over_threshold, window_expired, final_sale, not_found

Example: {"cancel.payment": {"op": "cancel", "attribute": "payment", "deny": ["gift_card"],
"reason": "service_not_offered"}} refuses to cancel orders paid entirely by gift card.

Beyond the rules, the world itself refuses what its systems cannot do (unknown or foreign orders,
items not in the order, variants of another product or out of stock, gift cards short of the amount:
insufficient_balance), and a request naming an item that is not in the order is refused not_found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simulators.domain import AuditView, DomainWorld, Grade, Judge, PlannedCall, ToolExchange
from simulators.domains.retail import generator, grader, planner, world
from simulators.protocol import JSON, Scenario, ScenarioEnvironment, Task

__all__ = ["DOMAIN", "RetailDomain"]


class RetailDomain:
    name = "retail"

    def new_world(self, environment: ScenarioEnvironment, task: Task) -> DomainWorld:
        return world.new_world(environment, task)

    async def grade(self, environment: ScenarioEnvironment, task: Task, world: DomainWorld,
                    finish_arguments: Mapping[str, JSON] | None, judge: Judge | None) -> Grade:
        return grader.grade_episode(environment, task, world, finish_arguments)

    def generate(self, scenario: str, seed: int) -> Scenario:
        return generator.generate(scenario, seed)

    def next_call(self, instruction: str, policy: Mapping[str, JSON],
                  history: Sequence[ToolExchange]) -> PlannedCall:
        return planner.next_call(instruction, policy, history)

    def audit_view(self, environment: ScenarioEnvironment, task: Task) -> AuditView | None:
        return world.audit_view(environment, task)


DOMAIN = RetailDomain()

"""The retail world of one episode: tools by name over a copy-on-write view of the store.

Which tools, with which checks, depends on the world. A built-in world declares `_mechanics` and runs
the built-in tools (`writes`): mechanically permissive on every policy dimension, owner-scoped, with
their own messages. A world without `_mechanics` is the public export's; for `retail_l1..l3` it runs the
reference's tools with that scenario's store configuration (`reference_tools`, `store_config`): caps,
fees, windows and destinations enforced as the reference enforces them, its messages word for word,
records shown as the reference prints them (`json.dumps` spacing), every customer visible. Nothing the
world decides this by is hidden from the agent: the scenario name is part of every task view.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import orjson

from simulators.domain import AuditView
from simulators.domains.retail import reads, writes
from simulators.domains.retail.reference_tools import Handler, argument_error, reference_handlers
from simulators.domains.retail.scope import episode_orders, world_index
from simulators.domains.retail.state import EpisodeState
from simulators.domains.retail.store_config import StoreConfig, reference_config
from simulators.domains.retail.vocabulary import TOOL_OP
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, Task

__all__ = ["audit_view", "HANDLERS", "RetailWorld", "new_world", "store_config_for"]

HANDLERS: dict[str, Handler] = {
    "find_user_id_by_name_zip": reads.find_user_id_by_name_zip,
    "get_user_details": reads.get_user_details,
    "get_order_details": reads.get_order_details,
    "get_product_details": reads.get_product_details,
    "cancel_pending_order": writes.cancel_pending_order,
    "modify_pending_order_items": writes.modify_pending_order_items,
    "modify_pending_order_address": writes.modify_pending_order_address,
    "modify_pending_order_payment": writes.modify_pending_order_payment,
    "return_delivered_order_items": writes.return_delivered_order_items,
    "exchange_delivered_order_items": writes.exchange_delivered_order_items,
    "place_order": writes.place_order,
}
"""The built-in tools."""

_REFERENCE_HANDLERS: dict[str, dict[str, Handler]] = {}
"""scenario -> its reference tools, built on first use."""


class RetailWorld:
    def __init__(self, state: EpisodeState, handlers: Mapping[str, Handler] = HANDLERS,
                 reference: bool = False) -> None:
        self.state = state
        self._handlers = handlers
        self._reference = reference
        self.checks_own_arguments = reference
        """An export world answers arguments as the reference does (the session passes them through
        unchecked): Python's TypeError for a call that does not bind, the tool's own checks otherwise."""

    def call(self, name: str, arguments: Mapping[str, JSON]) -> str:
        handler = self._handlers.get(name)
        if handler is None:
            raise ToolError(f"the store has no tool '{name}'")
        problem = argument_error(name, arguments) if self._reference else None
        if problem is not None:
            raise ToolError(problem)
        try:
            result = handler(self.state, arguments)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise ToolError(self._failure(exc)) from exc
        if isinstance(result, str):
            return result
        return json.dumps(result) if self._reference else orjson.dumps(result).decode()

    def _failure(self, exc: Exception) -> str:
        if self._reference:
            return str(exc)  # what the reference's tool runner shows for an exception: `Error: <exc>`
        if isinstance(exc, KeyError):
            # a record that names something missing (bad data or a required argument left out)
            return f"missing {exc}"
        # an argument or a record of an unexpected shape: the model should see it, not the runner
        return f"cannot process this call: {exc}"

    def snapshot(self) -> JSON:
        return self.state.snapshot()


def store_config_for(environment: ScenarioEnvironment, scenario: str) -> StoreConfig | None:
    """The reference configuration an export world runs with; None for a built-in world."""
    if world_index(environment).declares_mechanics:
        return None
    return reference_config(scenario)


def new_world(environment: ScenarioEnvironment, task: Task) -> RetailWorld:
    world = environment.world
    index = world_index(environment)
    config = store_config_for(environment, task.scenario)
    reference = config is not None
    state = EpisodeState(world, index, episode_orders(world, task, metadata_first=reference),
                         hide_serving_only=task.split == "test", open_accounts=reference)
    if config is None:
        return RetailWorld(state)
    handlers = _REFERENCE_HANDLERS.get(task.scenario)
    if handlers is None:
        handlers = _REFERENCE_HANDLERS.setdefault(task.scenario, reference_handlers(config))
    return RetailWorld(state, handlers, reference=True)


WRITE_TOOLS = frozenset({*TOOL_OP, "place_order"})
"""The store's tools that change records."""


def audit_view(environment: ScenarioEnvironment, task: Task) -> AuditView:
    """The episode's own records are its order(s) and their customer, plus orders it places for that
    customer; the store has no escalation tool."""
    orders = environment.world.get("orders", {})
    own_orders = episode_orders(environment.world, task, metadata_first=store_config_for(environment, task.scenario)
                                is not None)
    owner = str(orders[own_orders[0]].get("user_id", "")) if own_orders else ""
    own = {("orders", order_id) for order_id in own_orders} | ({("users", owner)} if owner else set())
    return AuditView(write_tools=WRITE_TOOLS, escalation_tools=frozenset(), own=frozenset(own),
                     initial=environment.world, owner=("user_id", owner) if owner else None)

"""The retail world of one episode: tools by name over a copy-on-write view of the store."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import orjson

from simulators.domains.retail import reads, writes
from simulators.domains.retail.scope import episode_orders, world_index
from simulators.domains.retail.state import EpisodeState
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, Task

__all__ = ["HANDLERS", "RetailWorld", "new_world"]

Handler = Callable[[EpisodeState, Mapping[str, JSON]], JSON]

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


class RetailWorld:
    def __init__(self, state: EpisodeState) -> None:
        self.state = state

    def call(self, name: str, arguments: Mapping[str, JSON]) -> str:
        handler = HANDLERS.get(name)
        if handler is None:
            raise ToolError(f"the store has no tool '{name}'")
        try:
            result = handler(self.state, arguments)
        except KeyError as exc:
            # a record that names something missing (bad data or a required argument left out)
            raise ToolError(f"missing {exc}") from exc
        except (TypeError, ValueError, AttributeError) as exc:
            # an argument or a record of an unexpected shape: the model should see it, not the runner
            raise ToolError(f"cannot process this call: {exc}") from exc
        return result if isinstance(result, str) else orjson.dumps(result).decode()

    def snapshot(self) -> JSON:
        return self.state.snapshot()


def new_world(environment: ScenarioEnvironment, task: Task) -> RetailWorld:
    world = environment.world
    state = EpisodeState(world, world_index(environment), episode_orders(world, task),
                         hide_serving_only=task.split == "test")
    return RetailWorld(state)

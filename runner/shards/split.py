"""Which process runs which part of a sweep: a deterministic split of its cells, balanced by projected work.

A cell is one planned stream (model x method x scenario x replica): its
serving episodes must run in order in one process, and its test sets against that process's method
state, so a cell is never cut. Every shard computes the same split from the same plan, with no
coordination: the cells are ordered by projected work (largest first, ties in plan order) and each
goes to the shard with the least work so far (ties to the lowest index). That is the
longest-processing-time rule; its busiest shard is within one cell of even once cells are small
against a shard's share (the full built-in sweep of four methods over 4 shards: 0.12% above the mean).

Projected work is model turns, estimated from the dataset without a call: an episode reads the
documents, looks up each record its request names, makes its gold's writes and finishes (on the
built-in suite within 4% of the scripted agent's measured turns in every scenario); a learning method
that calls a model adds one call per serving episode. Projected cost prices those turns at each
model's list price, a turn's prompt being the scenario's system prompt, tools and instruction (4 bytes
a token) and its reply 150 tokens. It only shares a sweep's budget between shards, so its proportions
matter, not its scale. Pure functions: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import orjson

from runner.config.plan import Stream
from runner.config.prices import Price
from runner.cost.pricing import cost_usd
from simulators.model_api import Usage
from simulators.protocol import Scenario, Task

__all__ = ["OUTPUT_TOKENS_PER_TURN", "CellWork", "Split", "cell_work", "episode_turns", "split_cells",
           "streams_work"]

OUTPUT_TOKENS_PER_TURN = 150
"""A turn's reply (a tool call with its reasoning), for the cost estimate only."""
BYTES_PER_TOKEN = 4


@dataclass(frozen=True)
class CellWork:
    stream_id: str
    model: str
    turns: int
    """Projected model turns (and method calls) of the whole cell."""
    cost_usd: float
    """Projected spend at the model's list price (0 for an unpriced or free model)."""


@dataclass(frozen=True)
class Split:
    count: int
    assignment: dict[str, int]
    """Stream id -> shard index, in plan order."""
    turns: tuple[int, ...]
    """Projected turns per shard."""
    cost_usd: tuple[float, ...]
    """Projected spend per shard."""

    def streams_of(self, index: int) -> list[str]:
        return [stream_id for stream_id, owner in self.assignment.items() if owner == index]

    @property
    def imbalance(self) -> float:
        """The busiest shard's projected turns over the mean, minus one (0.0: perfectly even)."""
        mean = sum(self.turns) / self.count
        return max(self.turns) / mean - 1 if mean else 0.0


_RECORD_ID = re.compile(r"[A-Za-z0-9_#-]*\d{3,}[A-Za-z0-9_-]*")
"""A token that names a record: letters with three or more digits (#W1561875, TXN-207864, paypal_1979704)
or a number of five digits or more (an item id, a zip code); shorter numbers are amounts or counts."""


def episode_turns(task: Task) -> int:
    """Reading the documents, one lookup per record the request names, the gold's writes, the finish."""
    request = task.instruction.split("\n\n", 1)[-1]  # after the `Current timestamp: t` line
    records = {token for token in _RECORD_ID.findall(request) if not token.isdigit() or len(token) >= 5}
    return 2 + len(records) + len(task.evaluator.actions)


def _prompt_tokens(scenario: Scenario, task: Task) -> int:
    environment = scenario.environment
    size = len(environment.system_prompt.encode()) + len(orjson.dumps(list(environment.tools)))
    return (size + len(task.instruction.encode())) // BYTES_PER_TOKEN


def cell_work(stream: Stream, calls_model_to_learn: bool, price: Price | None) -> CellWork:
    """One cell's projected turns and spend."""
    turns, cost = 0, 0.0
    for unit in stream.units():
        episode = episode_turns(unit.task) + (1 if calls_model_to_learn and unit.phase == "serving" else 0)
        turns += episode
        if price is not None:
            usage = Usage(input_tokens=episode * _prompt_tokens(stream.scenario, unit.task),
                          output_tokens=episode * OUTPUT_TOKENS_PER_TURN)
            cost += cost_usd(usage, price)
    return CellWork(stream.stream_id, stream.model, turns, cost)


def split_cells(cells: Sequence[CellWork], count: int) -> Split:
    """Cells (in plan order) over `count` shards: largest first, each to the least loaded shard."""
    if count < 1:
        raise ValueError("a sweep splits into at least one shard")
    order = sorted(range(len(cells)), key=lambda i: (-cells[i].turns, i))
    owner = [0] * len(cells)
    load = [0] * count
    for i in order:
        target = min(range(count), key=lambda s: (load[s], s))
        owner[i] = target
        load[target] += cells[i].turns
    costs = [0.0] * count
    for i, cell in enumerate(cells):
        costs[owner[i]] += cell.cost_usd
    return Split(count, {cell.stream_id: owner[i] for i, cell in enumerate(cells)}, tuple(load), tuple(costs))


def streams_work(streams: Sequence[Stream], calls_model_to_learn: Callable[[str], bool],
                 prices: Mapping[str, Price | None]) -> list[CellWork]:
    """Every planned stream's projected work, in plan order."""
    return [cell_work(stream, calls_model_to_learn(stream.method), prices.get(stream.model)) for stream in streams]

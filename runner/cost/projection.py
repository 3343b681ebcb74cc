"""What a full sweep will cost, projected from a run's measured episodes (pure: no I/O).

The measure is each finished episode's tokens per model called (fresh input, cache reads, cache writes,
output), so a projection carries the run's own tokens per turn, turns per episode and cache hit rates.
For each (model, method) of the full sweep and each (scenario, phase) cell of it:

    projected = sum over cells of (the cell's episodes in the full sweep x the mean cost of the run's
                episodes of that cell) + the method's own calls per serving episode x serving episodes

A cell the run has no episode of borrows the run's episodes of the same phase (any scenario), then of
any phase. The range is a 95% bootstrap interval: the run's episodes are resampled within each cell
(fixed seed, so the same journal always gives the same numbers), which is the pilot's spread scaled to
the full sweep's counts. The uncached figure prices the same tokens with every prompt token at the
plain input rate: what caching is worth.

A model the run did not call is projected from another model's episodes of the same method, each of
that model's calls re-priced at the target's rates (calls to other models, such as a judge, keep their
own): its tokens, turns and hit rate are that model's, not its own, and the row says so.

With batching (`--batch tests`: `batched` names the models whose test calls go through a batch API),
the batched figure prices every call of a test cell to such a model at its batch tier (agent and judge
alike); serving episodes and the method's own calls stay live. A batched model with no batch tier is
priced live there and named in `no_batch_price`.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from runner.config.prices import Price
from runner.cost.pricing import cost_usd, is_offline_model, uncached_usd
from runner.journal import EpisodeCalls, MethodCalls
from simulators.model_api import Usage

__all__ = ["BOOTSTRAP_DRAWS", "BOOTSTRAP_SEED", "Measured", "ProjectedRow", "SweepCounts", "measured", "project"]

BOOTSTRAP_DRAWS = 1000
BOOTSTRAP_SEED = 0
Cell = tuple[str, str]
"""(scenario, phase)."""
CostOf = Callable[[Sequence[tuple[str, Usage]]], float]
SweepCounts = Mapping[str, Mapping[Cell, int]]
"""Method -> (scenario, phase) -> episodes of one model's full sweep (the same for every model)."""


@dataclass(frozen=True)
class Episode:
    cell: Cell
    turns: int
    calls: tuple[tuple[str, Usage], ...]
    """(model called, tokens) per model the episode called."""


@dataclass
class Measured:
    """One (model, method) stream of the run: its finished episodes and its method's own calls."""

    episodes: list[Episode] = field(default_factory=list)
    method_calls: dict[str, list[tuple[str, Usage]]] = field(default_factory=lambda: defaultdict(list))
    """Scenario -> (model called, tokens) of the method's updates."""


def measured(episodes: Sequence[EpisodeCalls], methods: Sequence[MethodCalls]) -> dict[tuple[str, str], Measured]:
    """The journal's rows grouped per (model, method) stream, episodes in planning order."""
    calls: dict[str, list[tuple[str, Usage]]] = defaultdict(list)
    heads: dict[str, EpisodeCalls] = {}
    for row in episodes:
        heads.setdefault(row.unit_id, row)
        usage = Usage(row.input_tokens, row.cached_input_tokens, row.cache_write_tokens, row.output_tokens,
                      cache_write_1h_tokens=row.cache_write_1h_tokens)
        calls[row.unit_id].append((row.called or row.model, usage))
    found: dict[tuple[str, str], Measured] = defaultdict(Measured)
    for unit_id, head in heads.items():
        found[(head.model, head.method)].episodes.append(
            Episode((head.scenario, head.phase), head.turns, tuple(calls[unit_id])))
    for update in methods:
        usage = Usage(update.input_tokens, update.cached_input_tokens, update.cache_write_tokens,
                      update.output_tokens, cache_write_1h_tokens=update.cache_write_1h_tokens)
        found[(update.model, update.method)].method_calls[update.scenario].append((update.called, usage))
    return dict(found)


@dataclass(frozen=True)
class ProjectedRow:
    model: str
    method: str
    source: str
    """The run's model whose episodes were measured: the model itself, or the one it is re-priced from."""
    episodes: int
    """Episodes of the full sweep for this (model, method)."""
    measured_episodes: int
    turns_per_episode: float
    input_tokens_per_turn: float
    hit_rate: float | None
    usd_per_episode: float
    projected_usd: float
    low_usd: float
    high_usd: float
    uncached_usd: float
    uncached_low_usd: float
    uncached_high_usd: float
    batched_usd: float | None = None
    """With batching: the same projection with test calls at the batch price; None: nothing batched."""
    batched_low_usd: float | None = None
    batched_high_usd: float | None = None
    no_batch_price: tuple[str, ...] = ()
    """Batched models called by the row's test episodes that have no batch price (projected live)."""

    @property
    def repriced(self) -> bool:
        return self.source != self.model

    @property
    def batch_saving_usd(self) -> float | None:
        return None if self.batched_usd is None else self.projected_usd - self.batched_usd


def project(stream: Measured, model: str, method: str, source: str, counts: Mapping[Cell, int],
            prices: Mapping[str, Price], batched: Callable[[str], bool] | None = None) -> ProjectedRow:
    """One (model, method) of the full sweep from `stream`, the run's measure of (`source`, `method`);
    `batched`: which models send their test calls through a batch API (None: none does)."""

    def priced_as(called: str) -> str:
        return model if called == source else called

    def price_of(called: str) -> Price | None:
        return prices.get(priced_as(called))

    def cost(calls: Sequence[tuple[str, Usage]], cached: bool) -> float:
        bill = cost_usd if cached else uncached_usd
        return sum(bill(usage, price_of(called)) for called, usage in calls)

    def batch_cost(calls: Sequence[tuple[str, Usage]]) -> float:
        total = 0.0
        for called, usage in calls:
            live = price_of(called)
            tier = live.batch if live is not None and batched is not None and batched(priced_as(called)) else None
            total += cost_usd(usage, tier or live)
        return total

    pools = _pools(stream.episodes, counts)
    with_cache = {cell: [cost(e.calls, True) for e in pool] for cell, pool in pools.items()}
    without = {cell: [cost(e.calls, False) for e in pool] for cell, pool in pools.items()}
    method_cost = _method_cost(stream, counts, lambda calls: cost(calls, True))
    method_uncached = _method_cost(stream, counts, lambda calls: cost(calls, False))
    point, low, high = _bootstrap(with_cache, counts)
    plain, plain_low, plain_high = _bootstrap(without, counts)
    episodes = sum(counts.values())
    tested = {priced_as(called) for cell, pool in pools.items() if cell[1] == "test"
              for e in pool for called, _ in e.calls}
    batch: tuple[float, float, float] | None = None
    lacking: tuple[str, ...] = ()
    if batched is not None and any(batched(name) for name in tested):
        batch = _bootstrap({cell: [batch_cost(e.calls) if cell[1] == "test" else cost(e.calls, True) for e in pool]
                            for cell, pool in pools.items()}, counts)
        lacking = tuple(sorted(name for name in tested if batched(name) and not is_offline_model(name)
                               and (prices.get(name) is None or prices[name].batch is None)))
    return ProjectedRow(
        model=model, method=method, source=source, episodes=episodes, measured_episodes=len(stream.episodes),
        turns_per_episode=_ratio(sum(e.turns for e in stream.episodes), len(stream.episodes)),
        input_tokens_per_turn=_ratio(_tokens(stream, "input_tokens"), sum(e.turns for e in stream.episodes)),
        hit_rate=_hit_rate(stream), usd_per_episode=_ratio(point + method_cost, episodes),
        projected_usd=point + method_cost, low_usd=low + method_cost, high_usd=high + method_cost,
        uncached_usd=plain + method_uncached, uncached_low_usd=plain_low + method_uncached,
        uncached_high_usd=plain_high + method_uncached,
        batched_usd=None if batch is None else batch[0] + method_cost,
        batched_low_usd=None if batch is None else batch[1] + method_cost,
        batched_high_usd=None if batch is None else batch[2] + method_cost, no_batch_price=lacking)


def _pools(episodes: Sequence[Episode], counts: Mapping[Cell, int]) -> dict[Cell, list[Episode]]:
    """The run's episodes for each cell of the full sweep: its own, else its phase's, else all."""
    by_cell: dict[Cell, list[Episode]] = defaultdict(list)
    by_phase: dict[str, list[Episode]] = defaultdict(list)
    for episode in episodes:
        by_cell[episode.cell].append(episode)
        by_phase[episode.cell[1]].append(episode)
    return {cell: by_cell.get(cell) or by_phase.get(cell[1]) or list(episodes)
            for cell, n in counts.items() if n > 0}


def _method_cost(stream: Measured, counts: Mapping[Cell, int], cost: CostOf) -> float:
    """The method's updates per serving episode the run measured, times the full sweep's serving episodes."""
    served: dict[str, int] = defaultdict(int)
    for episode in stream.episodes:
        if episode.cell[1] == "serving":
            served[episode.cell[0]] += 1
    spent = {scenario: cost(calls) for scenario, calls in stream.method_calls.items()}
    if not spent:
        return 0.0
    overall = _ratio(sum(spent.values()), sum(served[s] for s in spent))
    total = 0.0
    for (scenario, phase), n in counts.items():
        if phase == "serving":
            own = spent.get(scenario)
            total += n * (_ratio(own, served[scenario]) if own is not None and served[scenario] else overall)
    return total


def _bootstrap(costs: Mapping[Cell, list[float]], counts: Mapping[Cell, int]) -> tuple[float, float, float]:
    """The projection and its 95% interval, resampling each cell's episodes."""
    point = sum(counts[cell] * sum(values) / len(values) for cell, values in costs.items() if values)
    rng = random.Random(BOOTSTRAP_SEED)
    draws = []
    for _ in range(BOOTSTRAP_DRAWS):
        total = 0.0
        for cell, values in costs.items():
            if values:
                total += counts[cell] * sum(rng.choices(values, k=len(values))) / len(values)
        draws.append(total)
    draws.sort()
    return point, draws[int(0.025 * (BOOTSTRAP_DRAWS - 1))], draws[int(round(0.975 * (BOOTSTRAP_DRAWS - 1)))]


def _tokens(stream: Measured, name: str) -> int:
    return sum(int(getattr(usage, name)) for e in stream.episodes for _, usage in e.calls)


def _hit_rate(stream: Measured) -> float | None:
    total = _tokens(stream, "input_tokens")
    return _tokens(stream, "cached_input_tokens") / total if total else None


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0

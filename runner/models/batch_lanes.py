"""Which of a sweep's models batch their test calls (`--batch tests`, an endpoint's own `batch`), refused
before anything is spent when one cannot (no batch API, no batch price), and the run's `Batcher` over
their endpoints' batch APIs."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from runner.batching.batcher import Batcher, Lane
from runner.batching.waiting import BatchClock, BatchTiming
from runner.config.batch_settings import endpoint_batch_mode
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.journal import Journal
from runner.models.endpoints import endpoint_of
from runner.models.registry import ModelEntry
from runner.providers.anthropic import AnthropicClient
from runner.providers.batch_api import BatchBackend
from runner.providers.batch_backends import batch_backend
from runner.providers.batch_probe import batch_support
from runner.providers.openai_compat import OpenAICompatClient
from simulators.errors import ShiftbenchInputError

__all__ = ["BATCH_KINDS", "batch_prices", "make_batcher", "refuse_without_batch_api"]

BATCH_KINDS = ("openai", "anthropic", "openai-compatible")
"""Endpoint kinds with a batch API shiftbench speaks (an OpenAI-compatible server only when it offers
`/v1/files` + `/v1/batches`: `probe --full` says which)."""


def batch_prices(config: SweepConfig, entries: Mapping[str, ModelEntry],
                 prices: Mapping[str, Price | None]) -> dict[str, Price | None]:
    """Each model whose test calls are batched, with its batch price (None: unpriced, --allow-unpriced); a
    model that is asked to batch and cannot is refused with one line naming it and what to do."""
    batched: dict[str, Price | None] = {}
    for name, entry in entries.items():
        table = config.endpoints.get(name)
        if endpoint_batch_mode(config.batch, table) != "tests":
            continue
        off = (f'set [endpoints."{name}"] batch = "off" in the sweep file' if table is not None
               else "run it with --batch off")
        if entry.offline:
            raise ShiftbenchInputError(f"--batch tests: '{name}' runs in-process and has no batch API; {off}")
        if entry.kind not in BATCH_KINDS or batch_backend(entry.client) is None:
            raise ShiftbenchInputError(f"--batch tests: '{name}' is a {entry.kind} endpoint, which has no batch API "
                                       f"shiftbench can use; {off} (its calls then run live)")
        batched[name] = _batch_price(config, name, prices.get(name), off)
    return batched


def _batch_price(config: SweepConfig, name: str, price: Price | None, off: str) -> Price | None:
    """The model's batch tier; None (its batched calls unpriced, as a live run's unpriced model is) only
    with --allow-unpriced: a budget cannot cap what it cannot price, so the run must be told."""
    if price is not None and price.batch is not None:
        return price.batch
    if config.allow_unpriced:
        return None
    # The rates a user writes are on the provider's pricing page, which lists batch prices beside live.
    raise ShiftbenchInputError(
        f"--batch tests: no batch price known for '{name}'; give it in the sweep file as a "
        f'[prices."{name}".batch] table (input, cached_input, cache_write, output in USD per million '
        f"tokens: the provider's pricing page lists its batch prices), or pass --allow-unpriced to run its "
        f"batched calls unpriced, or {off}")


async def refuse_without_batch_api(config: SweepConfig, entries: Mapping[str, ModelEntry],
                                   batched: Mapping[str, Price | None]) -> None:
    """Ask each batching model's endpoint whether it offers a batch API (one GET of its batch list, as
    `probe --full` does), before a paid call: a server that says no (llama.cpp, vLLM) is refused with one
    line; one that cannot say is let through (its first batch tells)."""
    for name in batched:
        client = entries[name].client
        if not isinstance(client, OpenAICompatClient | AnthropicClient):
            continue
        found = await batch_support(client)
        if found.offered is False:
            fix = (f'set [endpoints."{name}"] batch = "off" in the sweep file' if name in config.endpoints
                   else "run it with --batch off")
            raise ShiftbenchInputError(f"--batch tests: '{name}' at {endpoint_of(name, config.endpoints).base_url} "
                                       f"offers {found.detail.split(':')[0]}; {fix}")


def _backend(entry: ModelEntry) -> BatchBackend:
    backend = batch_backend(entry.client)
    assert backend is not None, f"{entry.name} has no batch API (checked at start)"
    return backend


def make_batcher(config: SweepConfig, entries: Mapping[str, ModelEntry], batched: Mapping[str, Price | None],
                 run_id: str, journal: Journal, say: Callable[[str], None],
                 clock: BatchClock | None = None) -> Batcher | None:
    """The run's batcher over the batching models' endpoints; None when none batches."""
    if not batched:
        return None
    settings = config.batching()
    lanes = {name: Lane(_backend(entries[name]), endpoint_of(name, config.endpoints).base_url,
                        "anthropic" if isinstance(entries[name].client, AnthropicClient) else "openai")
             for name in batched}
    timing = BatchTiming(settings.max_items, settings.wait_s, settings.poll_s, settings.poll_max_s,
                         settings.on_item_failure)
    return Batcher(run_id, journal, lanes, timing, clock=clock, say=say)

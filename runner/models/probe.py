"""Before anything is spent, one tiny request per model: an unreachable endpoint or a rejected key stops
the run with a clear message, and no model silently stands in for another. The answers are returned so
the run journals them (purpose `probe`): priced and counted against its budget like any call.

An `openai-compatible` server is also asked what it publishes about itself (`runner.providers.server_info`):
its parallel slots go to its queue, so a call waiting behind them is not cut as stalled, and a
`max_concurrency` above them is pointed out (those calls only queue at the server)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from runner.models.registry import ModelEntry
from runner.providers import OpenAICompatClient
from runner.providers.taxonomy import InfrastructureError
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelRequest, ModelResponse
from simulators.protocol import Message

__all__ = ["PROBE_OUTPUT_TOKENS", "ProbeResult", "probe_models"]

PROBE_OUTPUT_TOKENS = 8


@dataclass(frozen=True)
class ProbeResult:
    model: str
    response: ModelResponse
    latency_s: float


async def probe_models(entries: Iterable[ModelEntry], say: Callable[[str], None]) -> list[ProbeResult]:
    results = []
    for entry in entries:
        if entry.offline or entry.probe is None:
            continue
        request = ModelRequest(system="Reply with the word ok.", messages=(Message(role="user", content="ok?"),),
                               max_output_tokens=PROBE_OUTPUT_TOKENS, purpose="probe")
        started = time.monotonic()
        try:
            response = await entry.probe.respond(request)
        except InfrastructureError as exc:
            raise ShiftbenchInputError(f"--models: probe of '{entry.name}' failed ({exc.failure}: {exc}); "
                                       f"check its endpoint and {entry.key_hint or 'its API key'}") from exc
        results.append(ProbeResult(entry.name, response, time.monotonic() - started))
        say(f"Probe: {entry.name} answered.")
        if entry.kind == "openai-compatible" and isinstance(entry.probe, OpenAICompatClient):
            await _learn_slots(entry, entry.probe, say)
    return results


async def _learn_slots(entry: ModelEntry, client: OpenAICompatClient, say: Callable[[str], None]) -> None:
    for base_url, info in await client.server_info():
        if not info.slots:
            continue
        queued = (f"; max_concurrency is {entry.max_concurrency}, so up to {entry.max_concurrency - info.slots} "
                  "calls at a time wait at the server (not counted as stalls; set max_concurrency = "
                  f"{info.slots} to keep them here)" if entry.max_concurrency > info.slots else "")
        say(f"  {base_url}: {info.slots} parallel slot{'s' if info.slots > 1 else ''} ({info.source}){queued}.")

"""Model calls pass a gate: a per-model and a run-wide priority limiter, and the live counters."""

from __future__ import annotations

import itertools

from runner.display.progress import RunProgress
from runner.providers.priority import CALL_PRIORITY, PriorityLimiter
from simulators.model_api import ModelClient, ModelRequest, ModelResponse

__all__ = ["Gate", "GatedModel"]

_call_ids = itertools.count()


class Gate:
    def __init__(self, run_wide: PriorityLimiter, per_model: PriorityLimiter, progress: RunProgress) -> None:
        self.run_wide = run_wide
        self.per_model = per_model
        self.progress = progress


class GatedModel:
    def __init__(self, inner: ModelClient, gate: Gate, priority: int) -> None:
        self._inner = inner
        self._gate = gate
        self._priority = priority

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        gate, progress = self._gate, self._gate.progress
        async with gate.per_model.slot(self._priority), gate.run_wide.slot(self._priority):
            call_id = next(_call_ids)
            progress.calls_in_flight += 1
            progress.call_started[call_id] = progress.clock()
            priority = CALL_PRIORITY.set(self._priority)
            try:
                response = await self._inner.respond(request)
            finally:
                CALL_PRIORITY.reset(priority)
                progress.calls_in_flight -= 1
                del progress.call_started[call_id]
        progress.add_tokens(response.usage.input_tokens, response.usage.output_tokens)
        return response

"""The dashboard's view of one stream's calls: the turns of each episode in flight and the stream's spend.

Outermost in the client stack, so a replayed answer counts as a turn like any other and every dollar
the stream spends (its agent, judge and method calls) lands on its row. While a call runs, the stream
is the context's `CURRENT_STREAM`, so a provider's retry notice (a 429 and its wait) is shown on the
stream that is waiting rather than on the run as a whole, and it listens for why the call is held
before it is sent (an open breaker, a rate limit: `runner.providers.waits`) to show on the stream's row.
"""

from __future__ import annotations

import itertools
from contextvars import ContextVar

from runner.display.progress import StreamProgress
from runner.providers.waits import WAIT_LISTENER, WaitReason
from simulators.model_api import ModelClient, ModelRequest, ModelResponse, Purpose

__all__ = ["CURRENT_STREAM", "WatchedModel"]

CURRENT_STREAM: ContextVar[StreamProgress | None] = ContextVar("CURRENT_STREAM", default=None)
_CALLS = itertools.count()


class WatchedModel:
    def __init__(self, inner: ModelClient, stream: StreamProgress, unit_id: str, purpose: Purpose) -> None:
        self._inner = inner
        self._stream = stream
        self._unit_id = unit_id
        self._purpose = purpose

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if self._purpose == "agent":
            self._stream.turn_started(self._unit_id)
        call = next(_CALLS)

        def held(reason: WaitReason | None) -> None:
            self._stream.call_held(call, reason)

        token, listening = CURRENT_STREAM.set(self._stream), WAIT_LISTENER.set(held)
        try:
            response = await self._inner.respond(request)
        finally:
            WAIT_LISTENER.reset(listening)
            CURRENT_STREAM.reset(token)
            self._stream.call_held(call, None)  # however the call ended, it is no longer held
        self._stream.spent_usd += response.cost_usd
        return response

"""Why a call is held before it is sent, told to whoever shows it (the dashboard's stream state).

A call waits at two places before its bytes go out: the endpoint's circuit breaker while it is open
(calls wait; one probe at a time tests the endpoint) and the endpoint's rate limiter while a
requests- or tokens-per-minute bucket refills or the provider's 429s have cut the concurrency it
allows. Each says so through `report_wait`, with the reason while the call waits and None once it
goes; the layer that knows which stream made the call (`runner.models.watched`) sets the listener
for the call's context. Without a listener (a probe, a test) reporting costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Literal

__all__ = ["BREAKER_OPEN", "QUOTA", "WAIT_LISTENER", "WaitReason", "report_wait"]

WaitReason = Literal["breaker open", "waiting for quota"]
BREAKER_OPEN: WaitReason = "breaker open"
QUOTA: WaitReason = "waiting for quota"

WAIT_LISTENER: ContextVar[Callable[[WaitReason | None], None] | None] = ContextVar(
    "shiftbench_wait_listener", default=None)
"""Told why the call in progress in this task waits (None: it no longer does)."""


def report_wait(reason: WaitReason | None) -> None:
    listener = WAIT_LISTENER.get()
    if listener is not None:
        listener(reason)

"""One attempt of one call against one endpoint: circuit breaker, rate-limit slot, POST, status check, read.

Shared by every provider client; the clients only build the body and read their own response format.
httpx errors are mapped into `AttemptFailed` here, where they enter, so the retry loop never sees an
httpx type. A streamed attempt's stall timeout (the client's read timeout, 120 s by default) is ours,
not httpx's: it does not run while the attempt waits behind the server's slots (`ServerQueue`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

import anyio
import httpx

from runner.providers.breaker import CircuitBreaker
from runner.providers.failures import AttemptFailed, check_status, transport_failure
from runner.providers.ratelimit import RateLimiter
from runner.providers.retry import Attempt, Outcome
from runner.providers.secret import HeaderAuth, Secret
from runner.providers.server_queue import ServerQueue, StallWatch
from runner.providers.taxonomy import POLICIES, Failure
from simulators.model_api import ModelResponse, Usage
from simulators.protocol import JSON, AssistantTurn

__all__ = ["EXTRA_SCOPES", "Endpoint", "ExtraBody", "Reader", "estimate_tokens", "estimated_usage", "merge_extra",
           "model_response"]

T = TypeVar("T")
_SLOW_DOWN = (Failure.RATE_LIMITED, Failure.OVERLOADED)
"""Failures that halve the endpoint's concurrency (AIMD)."""
Reader = Callable[[httpx.Response, Attempt], Awaitable[T]]
"""Reads a 2xx response into a result, recording usage on the attempt as it arrives."""


@dataclass(frozen=True)
class Endpoint:
    url: str
    http: httpx.AsyncClient
    secret: Secret
    auth: HeaderAuth
    limiter: RateLimiter
    headers: Mapping[str, str] = field(default_factory=dict)
    wall_clock: Callable[[], float] = time.time
    """Epoch seconds, for Retry-After dates and reset instants."""
    stall_timeout: bool = True
    """False for non-streamed calls: the server sends nothing until the whole answer is ready, so
    silence is no stall; the attempt's total timeout (the retry policy's) is what ends it. Giving
    up early would only queue the retry behind the abandoned request, which the server keeps
    computing."""
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker)
    queue: ServerQueue = field(default_factory=ServerQueue)
    """Our streamed calls in flight to this server and its published slots (shared like the limiter)."""

    async def send(self, payload: bytes, reserve_tokens: float, attempt: Attempt, read: Reader[T]) -> T:
        attempt.pause_clock()  # waiting for a paused endpoint or a slot is not the provider being slow
        async with self.breaker.admit() as ticket, self.limiter.slot(reserve_tokens) as permit:
            attempt.restart_clock()
            try:
                result = await self._exchange(payload, attempt, read)
            except AttemptFailed as failed:
                permit.outcome = "rate_limited" if failed.failure in _SLOW_DOWN else "failed"
                ticket.result = "failed" if POLICIES[failed.failure].trips_breaker else "answered"
                raise
            finally:
                permit.used_tokens = attempt.usage.input_tokens + attempt.usage.output_tokens
            permit.outcome = "ok"
            ticket.result = "answered"
            return result

    async def _exchange(self, payload: bytes, attempt: Attempt, read: Reader[T]) -> T:
        stall_s = self.http.timeout.read
        if not self.stall_timeout or stall_s is None:
            return await self._post(payload, attempt, read)
        with anyio.CancelScope() as scope:
            watch = StallWatch(scope, stall_s, attempt.restart_clock)
            self.queue.join(watch)
            if watch.queued:
                attempt.pause_clock()  # waiting behind the server's slots is not the provider being slow
            attempt.heard = watch.byte
            try:
                return await self._post(payload, attempt, read)
            finally:
                self.queue.leave(watch)
        raise AttemptFailed(Failure.TIMEOUT, f"no byte for {stall_s:g}s {watch.stalled_while} (stalled)")

    async def _post(self, payload: bytes, attempt: Attempt, read: Reader[T]) -> T:
        try:
            async with self.http.stream("POST", self.url, content=payload, headers=self.headers,
                                        auth=self.auth, timeout=self._timeout()) as response:
                attempt.heard()
                self.limiter.observe(response.headers)
                await check_status(response, self.secret, self.wall_clock())
                return await read(response, attempt)
        except httpx.HTTPError as exc:
            raise transport_failure(exc, self.secret) from exc

    def with_stall_timeout(self, stall_timeout: bool) -> Endpoint:
        return replace(self, stall_timeout=stall_timeout)

    def _timeout(self) -> httpx.Timeout:
        """The client's timeouts without its read timeout: a streamed call's stall timeout is the
        `StallWatch`'s, and a non-streamed call has none (the server is silent until its answer is whole)."""
        timeout = self.http.timeout
        return httpx.Timeout(connect=timeout.connect, read=None, write=timeout.write, pool=timeout.pool)


BYTES_PER_TOKEN = 4
"""The tokenizer-free rule of thumb (English text and JSON run at 3-5 bytes a token)."""


def estimate_tokens(payload: bytes, max_output_tokens: int) -> float:
    """A call's worst case for the tokens-per-minute bucket: ~4 bytes a prompt token, plus max output."""
    return len(payload) / BYTES_PER_TOKEN + max_output_tokens


def estimated_usage(payload: bytes, turn: AssistantTurn, max_output_tokens: int) -> Usage:
    """The usage of a call whose reply carried none (llama-cpp-python ignores `include_usage` when
    streaming): ~4 bytes a token of the request sent and of the reply read, marked `estimated`.
    Never 0 tokens, and never more output than the call allowed, so the call's reservation (which
    counts every prompt byte as a token) still covers it."""
    received = len(turn.text.encode()) + len(turn.reasoning.encode())
    received += sum(len(c.name.encode()) + len(c.arguments.encode()) for c in turn.tool_calls)
    output = min(max(1, math.ceil(received / BYTES_PER_TOKEN)), max(1, max_output_tokens))
    return Usage(input_tokens=max(1, math.ceil(len(payload) / BYTES_PER_TOKEN)), output_tokens=output,
                 estimated=True)


EXTRA_SCOPES = ("agent", "judge", "method", "probe")


@dataclass(frozen=True)
class ExtraBody:
    """A sweep file's `extra_body`, per call purpose.

    Its plain fields go on the calls that do the benchmark's work (agent, and judge when the model
    judges); a sub-table `agent`, `judge`, `method` or `probe` adds fields for those calls only. So a
    `tool_choice` meant for the agent never reaches a method's reflection call or the probe, which
    carry no tools (a strict server rejects `tool_choice` without `tools`)."""

    fields: Mapping[str, Mapping[str, JSON]] = field(default_factory=dict)

    @classmethod
    def parse(cls, extra: Mapping[str, JSON] | None) -> ExtraBody:
        extra = extra or {}
        plain = {k: v for k, v in extra.items() if k not in EXTRA_SCOPES}
        fields: dict[str, dict[str, JSON]] = {}
        for scope in EXTRA_SCOPES:
            scoped = extra.get(scope)
            base = plain if scope in ("agent", "judge") else {}
            fields[scope] = {**base, **(scoped if isinstance(scoped, Mapping) else {})}
        return cls(fields)

    def for_purpose(self, purpose: str) -> Mapping[str, JSON]:
        return self.fields.get(purpose, {})


def merge_extra(body: dict[str, JSON], extra: Mapping[str, JSON]) -> dict[str, JSON]:
    """The user's extra fields over the body; a None value removes the field (for servers that reject it)."""
    for key, value in extra.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def model_response(outcome: Outcome[AssistantTurn]) -> ModelResponse:
    # Priced here only when the provider reports a cost (OpenRouter); otherwise the caller prices it.
    cost = outcome.usage.reported_cost_usd or 0.0
    return ModelResponse(turn=outcome.value, usage=outcome.usage, cost_usd=cost, attempts=outcome.attempts,
                         replica=outcome.replica, served_model=outcome.served_model,
                         retried=outcome.retried)

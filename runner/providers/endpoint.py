"""One attempt of one call against one endpoint: rate-limit slot, POST, status check, read.

Shared by every provider client; the clients only build the body and read their own response format.
httpx errors are mapped into `AttemptFailed` here, where they enter, so the retry loop never sees an
httpx type.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import httpx

from runner.errors import RateLimited
from runner.providers.failures import AttemptFailed, check_status, transport_failure
from runner.providers.ratelimit import RateLimiter
from runner.providers.retry import Attempt, Outcome
from runner.providers.secret import HeaderAuth, Secret
from simulators.model_api import ModelResponse
from simulators.protocol import JSON, AssistantTurn

__all__ = ["Endpoint", "Reader", "estimate_tokens", "merge_extra", "model_response"]

T = TypeVar("T")
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

    async def send(self, payload: bytes, reserve_tokens: float, attempt: Attempt, read: Reader[T]) -> T:
        attempt.pause_clock()  # queueing for a slot is not the provider being slow
        async with self.limiter.slot(reserve_tokens) as permit:
            attempt.restart_clock()
            try:
                result = await self._exchange(payload, attempt, read)
            except AttemptFailed as failed:
                permit.outcome = "rate_limited" if failed.kind is RateLimited else "failed"
                raise
            finally:
                permit.used_tokens = attempt.usage.input_tokens + attempt.usage.output_tokens
            permit.outcome = "ok"
            return result

    async def _exchange(self, payload: bytes, attempt: Attempt, read: Reader[T]) -> T:
        try:
            async with self.http.stream("POST", self.url, content=payload, headers=self.headers,
                                        auth=self.auth) as response:
                self.limiter.observe(response.headers)
                await check_status(response, self.secret, self.wall_clock())
                return await read(response, attempt)
        except httpx.HTTPError as exc:
            raise transport_failure(exc, self.secret) from exc


def estimate_tokens(payload: bytes, max_output_tokens: int) -> float:
    """A call's worst case for the tokens-per-minute bucket: ~4 bytes a prompt token, plus max output."""
    return len(payload) / 4 + max_output_tokens


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
    return ModelResponse(turn=outcome.value, usage=outcome.usage, cost_usd=cost, attempts=outcome.attempts)

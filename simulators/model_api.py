"""The model interface every layer speaks: a request, a response, its usage.

It sits at the bottom so that methods (which may call a model only through the client the runner
hands them) and the scripted agents share it with the runner's provider clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from simulators.protocol import JSON, AssistantTurn, Message

__all__ = ["ModelClient", "ModelRequest", "ModelResponse", "Purpose", "Usage"]

Purpose = Literal["agent", "judge", "method", "probe"]


@dataclass(frozen=True)
class ModelRequest:
    system: str
    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, JSON], ...] = ()
    max_output_tokens: int = 4096
    purpose: Purpose = "agent"
    domain: str = ""
    """The scenario's domain. Real providers ignore it; the offline scripted model plans with it."""
    context: str = ""
    """The method's context (what it has learned), sent right after `system` and before the task. It
    changes only when the method learns, so the prompt up to it (tools, system prompt, documents,
    context) is a prefix every episode of a stream shares between two learning steps: providers'
    prompt caches read it instead of billing it again."""
    cache_scope: str = ""
    """The stream (and purpose) the request belongs to, for the provider's prompt cache (OpenAI's
    `prompt_cache_key`, the TTL of Anthropic's cache marks). Set by the runner's client stack below the
    journal, so it never changes which answers a request replays."""
    seed: int | None = None
    """The sampling seed of the stream replica that asks (`--replicas K`), sent to providers that take
    one; None: none sent. Kept the last field: a request without one hashes as before seeds existed."""

    @property
    def full_system(self) -> str:
        """`system` and `context` as one system text, for providers that take a single one."""
        if not self.context:
            return self.system
        return f"{self.system.rstrip()}\n\n{self.context.strip()}\n"


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reported_cost_usd: float | None = None
    """The cost the provider reported for this call, when it reports one."""
    estimated: bool = False
    """The provider sent no usage: the counts are an estimate from the bytes sent and received."""
    cache_write_1h_tokens: int = 0
    """The part of `cache_write_tokens` written to Anthropic's 1-hour cache (billed apart); the rest
    are 5-minute writes."""

    def __add__(self, other: Usage) -> Usage:
        reported = None
        if self.reported_cost_usd is not None or other.reported_cost_usd is not None:
            reported = (self.reported_cost_usd or 0.0) + (other.reported_cost_usd or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
            reported,
            self.estimated or other.estimated,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )


@dataclass(frozen=True)
class ModelResponse:
    turn: AssistantTurn
    usage: Usage
    """Summed over every attempt, failed ones included: their tokens are paid for too."""
    cost_usd: float = 0.0
    attempts: int = 1
    replica: str = ""
    """Which replica of a pooled endpoint answered (its base URL); empty for one endpoint."""
    cache_ttl: str = ""
    """The prompt-cache TTL the request asked the provider for ('5m', '1h'; '' when none was asked)."""
    served_model: str = ""
    """The model the provider says answered (its reply's `model`: often a dated version of the name
    asked for); empty when the reply names none."""
    retried: tuple[str, ...] = ()
    """The failure class of each attempt that failed before the answer ("timeout", "server error", ...)."""


class ModelClient(Protocol):
    """A model as the benchmark sees it: one async call, already rate-limited, budgeted and journaled
    by whoever built it."""

    @property
    def name(self) -> str: ...

    async def respond(self, request: ModelRequest) -> ModelResponse: ...

"""The mock provider's vocabulary: what a test scripts (`Reply`, `Failure`, `MockUsage`, `Call`) and what
the mock records of each request it receives (`Recorded`, with the dialect-blind readings a responder
needs: the tools offered, the tool results so far). Shared by the server (bench/mock_provider.py), the
reply bodies (bench/mock_bodies.py) and the responders (bench/mock_responders.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

__all__ = ["JSON", "Call", "Dialect", "Failure", "Ids", "MockUsage", "Recorded", "Reply", "Responder", "Response"]

JSON = Any
Dialect = Literal["openai", "anthropic"]
Ids = Iterator[int]


@dataclass(frozen=True)
class MockUsage:
    input_tokens: int = 100
    """Every prompt token, cached and cache-written ones included."""
    output_tokens: int = 20
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    """Anthropic dialect: the part of `cache_write_tokens` written to the 1-hour cache (sent in
    `usage.cache_creation` beside the 5-minute part)."""
    cost_usd: float | None = None
    """Sent as OpenRouter's `usage.cost` (OpenAI dialect only)."""


@dataclass(frozen=True)
class Call:
    name: str
    arguments: JSON = field(default_factory=dict)
    """A value is sent as JSON; a str is sent as is (so it may be malformed on purpose)."""
    id: str = ""

    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else orjson.dumps(self.arguments).decode()


@dataclass(frozen=True)
class Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[Call, ...] = ()
    usage: MockUsage = MockUsage()
    reasoning_field: str = "reasoning_content"
    """OpenAI dialect: the delta field that carries reasoning ("reasoning_content" or "reasoning")."""
    reasoning_details: tuple[Mapping[str, JSON], ...] = ()
    """OpenAI dialect, OpenRouter-style: each entry is streamed as its own delta."""
    signature: str = "sig-mock"
    """Anthropic: the thinking block's signature."""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    """Before the status line."""
    chunk_delay_s: float = 0.0
    stall_after: int | None = None
    """Streams this many events, then sends nothing more until the client gives up."""
    end_after: int | None = None
    """Streams this many events, then ends the body cleanly: no finish reason, no `[DONE]` (0: an
    empty 200, as llama-cpp-python sends for a streamed tool call that failed on its side)."""
    stream_usage: bool = True
    """OpenAI dialect: False ignores `stream_options.include_usage` (llama-cpp-python does)."""
    served_model: str | None = None
    """The reply's `model` field (the provider's dated version); None: the model the request named."""


@dataclass(frozen=True)
class Failure:
    status: int
    message: str = "mock failure"
    retry_after: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    body: JSON = None
    """The whole JSON body to send instead of the usual `{"error": ...}` (a server's own error shape)."""


Response = Reply | Failure


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: Mapping[str, str]
    """Lower-case names."""
    body: JSON
    """The parsed JSON body ({} when there was none)."""
    raw: bytes
    at: float
    """time.monotonic() when the request was fully received."""

    @property
    def dialect(self) -> Dialect:
        return "anthropic" if self.path.rstrip("/").endswith("/messages") else "openai"

    @property
    def streaming(self) -> bool:
        return bool(self._fields().get("stream"))

    def tools(self) -> list[tuple[str, Mapping[str, JSON]]]:
        """(name, parameter schema) of each tool offered, in either dialect."""
        found = []
        for tool in self._fields().get("tools") or ():
            spec = tool.get("function", tool)
            found.append((spec["name"], spec.get("parameters") or spec.get("input_schema") or {}))
        return found

    def tool_results(self) -> int:
        """How many tool results the conversation holds so far."""
        count = 0
        for message in self._fields().get("messages") or ():
            if message.get("role") == "tool":
                count += 1
            elif isinstance(message.get("content"), list):
                count += sum(1 for b in message["content"] if b.get("type") == "tool_result")
        return count

    def _fields(self) -> Mapping[str, JSON]:
        return self.body if isinstance(self.body, dict) else {}


Responder = Callable[[Recorded], Response]

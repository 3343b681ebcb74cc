"""Shared pieces for the provider tests: fake time, tools, requests and clients pointed at the mock."""

from __future__ import annotations

import random
from typing import Any

import httpx

from runner.providers import AnthropicClient, OpenAICompatClient, Retrier, RetryPolicy
from runner.providers.ledger import RequestLedger
from runner.providers.retry import RetryNotice
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn, Message, ToolCall

KEY = "sk-test-3b8f0e1c9d7a4f2e"

TOOLS: tuple[dict[str, Any], ...] = (
    {"type": "function", "function": {
        "name": "lookup", "description": "Look a thing up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}},
    {"type": "function", "function": {
        "name": "finish", "description": "End the episode.",
        "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}},
)


class FakeTime:
    """An injected clock and sleep: waits are recorded and pass instantly."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def fast_retrier(fake: FakeTime | None = None, notices: list[RetryNotice] | None = None,
                 ledger: RequestLedger | None = None, **policy: Any) -> Retrier:
    fake = fake or FakeTime()
    settings: dict[str, Any] = {"max_attempts": 5, "attempt_timeout_s": 10.0, "deadline_s": 600.0}
    settings.update(policy)
    return Retrier(RetryPolicy(**settings), clock=fake.clock, sleep=fake.sleep, rng=random.Random(7),
                   on_retry=notices.append if notices is not None else None, ledger=ledger)


def request(*messages: Message, system: str = "You are a clerk.") -> ModelRequest:
    return ModelRequest(system=system, messages=messages or (Message("user", "Refund order 7."),),
                        tools=TOOLS, max_output_tokens=2048)


def openai_client(base_url: str, http: httpx.AsyncClient, retrier: Retrier | None = None,
                  **options: Any) -> OpenAICompatClient:
    return OpenAICompatClient("gpt-test", base_url=base_url + "/v1", api_key=KEY, http=http,
                              retrier=retrier or fast_retrier(), **options)


def anthropic_client(base_url: str, http: httpx.AsyncClient, retrier: Retrier | None = None,
                     **options: Any) -> AnthropicClient:
    return AnthropicClient("claude-test", base_url=base_url, api_key=KEY, http=http,
                           retrier=retrier or fast_retrier(), **options)


def conversation_after_one_call(provider_state: Any = None, reasoning: str = "") -> tuple[Message, ...]:
    call = ToolCall("call_1", "lookup", '{"q": "order 7"}')
    return (
        Message("user", "Refund order 7."),
        Message("assistant", "Let me look.", reasoning=reasoning, tool_calls=(call,), provider_state=provider_state),
        Message("tool", "order 7: shipped", tool_call_id="call_1"),
    )


def continue_after(turn: AssistantTurn, result: str = "order 7: shipped") -> tuple[Message, ...]:
    """The conversation as the agent loop builds it after `turn` made one call."""
    call = turn.tool_calls[0]
    return (Message("user", "Refund order 7."),
            Message("assistant", turn.text, reasoning=turn.reasoning, tool_calls=turn.tool_calls,
                    provider_state=turn.provider_state),
            Message("tool", result, tool_call_id=call.id))

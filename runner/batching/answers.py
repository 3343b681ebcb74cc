"""A model response as the journal holds it: the response cache's rows and a batch item's answer are the
same bytes, so an answer collected from a batch replays exactly as a live one does."""

from __future__ import annotations

import orjson

from simulators.model_api import ModelResponse, Usage
from simulators.protocol import AssistantTurn, ToolCall

__all__ = ["decode_answer", "encode_answer"]


def encode_answer(response: ModelResponse) -> bytes:
    # orjson writes dataclasses itself, the same bytes as via asdict() without its deep copy of the reply.
    return orjson.dumps(response)


def decode_answer(raw: bytes) -> ModelResponse:
    data = orjson.loads(raw)
    turn = data["turn"]
    calls = tuple(ToolCall(**c) for c in turn["tool_calls"])
    return ModelResponse(
        turn=AssistantTurn(turn["text"], turn["reasoning"], calls, turn["provider_state"]),
        usage=Usage(**data["usage"]), cost_usd=data["cost_usd"],
    )

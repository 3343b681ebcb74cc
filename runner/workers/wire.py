"""What crosses between the runner and a method's worker: orjson frames, and the values they carry.

A frame is a 4-byte big-endian length and one orjson document. Only protocol values cross: a task's
view (never its category, window or split, except the labels the reference adapter is asked with), an
episode's record, a JSON state, the scenario's public face, and a model call's request and answer.
The child reads and writes frames with asyncio streams (it has nothing else to run); the runner's end
is a protocol of its own (`frame_link`).
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Mapping
from typing import Any

import orjson

from methods.base import PublicScenario
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import AssistantTurn, Message, TaskView, ToolCall
from simulators.record import EpisodeRecord

__all__ = ["HEADER", "MAX_FRAME", "FrameError", "decode_request", "decode_response", "encode", "public_from",
           "read_frame", "record_from", "view_from", "write_frame"]

HEADER = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024
"""A frame longer than this is a broken peer, not a message (a state of 256 MB would be one too)."""


class FrameError(Exception):
    """The peer sent something that is not a frame (too long, not JSON)."""


def encode(message: Mapping[str, Any]) -> bytes:
    body = orjson.dumps(message)
    return HEADER.pack(len(body)) + body


def _length(header: bytes) -> int:
    (length,) = HEADER.unpack(header)
    if length > MAX_FRAME:
        raise FrameError(f"a frame of {length} bytes (the limit is {MAX_FRAME})")
    return int(length)


# ------------------------------------------------------------------------------------------ child side

async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any]:
    header = await reader.readexactly(HEADER.size)
    message: dict[str, Any] = orjson.loads(await reader.readexactly(_length(header)))
    return message


async def write_frame(writer: asyncio.StreamWriter, message: Mapping[str, Any]) -> None:
    writer.write(encode(message))
    await writer.drain()


# ------------------------------------------------------------------------------------------------ values

def view_from(data: Mapping[str, Any]) -> TaskView:
    return TaskView(task_id=str(data["task_id"]), scenario=str(data["scenario"]), domain=str(data["domain"]),
                    tier=str(data["tier"]), timestamp=int(data["timestamp"]), instruction=str(data["instruction"]))


def record_from(data: Mapping[str, Any]) -> EpisodeRecord:
    return EpisodeRecord.from_json(data)


def public_from(data: Mapping[str, Any]) -> PublicScenario:
    return PublicScenario(name=str(data["name"]), domain=str(data["domain"]), tier=str(data["tier"]),
                          system_prompt=str(data["system_prompt"]), documents=dict(data["documents"]),
                          tools=tuple(data["tools"]))


def _calls(raw: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(**call) for call in raw or ())


def decode_request(data: Mapping[str, Any]) -> ModelRequest:
    """A method's request as the runner's client stack receives it (the child sent `orjson(request)`)."""
    messages = tuple(Message(**{**m, "tool_calls": _calls(m.get("tool_calls"))}) for m in data["messages"])
    return ModelRequest(system=data["system"], messages=messages, tools=tuple(data.get("tools") or ()),
                        max_output_tokens=int(data.get("max_output_tokens", 4096)),
                        purpose=data.get("purpose", "method"), domain=data.get("domain", ""),
                        context=data.get("context", ""), cache_scope=data.get("cache_scope", ""),
                        seed=data.get("seed"))


def decode_response(data: Mapping[str, Any]) -> ModelResponse:
    """The runner's answer as the method receives it."""
    turn = data["turn"]
    return ModelResponse(
        turn=AssistantTurn(text=turn.get("text", ""), reasoning=turn.get("reasoning", ""),
                           tool_calls=_calls(turn.get("tool_calls")), provider_state=turn.get("provider_state")),
        usage=Usage(**data["usage"]), cost_usd=float(data.get("cost_usd", 0.0)), attempts=int(data.get("attempts", 1)),
        replica=data.get("replica", ""), cache_ttl=data.get("cache_ttl", ""), served_model=data.get("served_model", ""),
        retried=tuple(data.get("retried") or ()))

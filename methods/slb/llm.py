"""A synchronous client of the reference's `complete` shape, over the stream's metered `ModelClient`.

A reference-interface method is synchronous; one that calls a model (`uses_model = True`) finds this
in `bundle["llm"]`. `complete(messages, tools=...)` takes OpenAI-style chat messages and returns an
object with `content`, `reasoning`, `tool_calls` (`[{id, name, arguments}]`) and `finish_reason`, as
the reference's client does; underneath, the call goes through the client the runner handed in, so it
is rate-limited, budgeted, journaled and, on a resume's replay, answered from the journal. `update`
runs in a worker thread for such methods, and the call is carried to the event loop from there: a call
from `context` (which runs on the loop) is refused, since a context must not spend money per task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import anyio.from_thread

from simulators.model_api import ModelClient, ModelRequest
from simulators.protocol import Message, ToolCall

__all__ = ["ReferenceLLM", "request_of"]


class ReferenceLLM:
    def __init__(self, client: ModelClient, domain: str) -> None:
        self._client = client
        self._domain = domain

    def complete(self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Mapping[str, Any]] | None = None,
                 temperature: float | None = None, top_p: float | None = None,
                 judge: bool = False) -> SimpleNamespace:
        request = request_of(messages, tools or (), self._domain)
        try:
            response = anyio.from_thread.run(self._client.respond, request)
        except RuntimeError as exc:
            if "event loop thread" in str(exc) or "worker thread" in str(exc):
                raise RuntimeError("bundle['llm'] may be called from update() only, not from context()") from exc
            raise
        turn = response.turn
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls]
        return SimpleNamespace(content=turn.text, reasoning=turn.reasoning or None, tool_calls=calls,
                               finish_reason="tool_calls" if calls else "stop")


def request_of(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], domain: str) -> ModelRequest:
    """System messages become the request's system text; the rest its conversation, in order."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    turns = tuple(_message(m) for m in messages if m.get("role") != "system")
    return ModelRequest(system=system, messages=turns, tools=tuple(tools), purpose="method", domain=domain)


def _message(message: Mapping[str, Any]) -> Message:
    role = message.get("role")
    if role not in ("user", "assistant", "tool"):
        raise ValueError(f"a message's role must be system, user, assistant or tool, got {role!r}")
    calls = tuple(ToolCall(str(c.get("id", "")), str(c["function"]["name"]), str(c["function"].get("arguments", "")))
                  for c in message.get("tool_calls") or ())
    return Message(role=role, content=str(message.get("content") or ""), reasoning=str(message.get("reasoning_content")
                   or ""), tool_calls=calls, tool_call_id=str(message.get("tool_call_id") or ""))

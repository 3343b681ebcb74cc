"""A scripted model for method tests, and records built the way the runner builds them."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import orjson

from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import JSON, AssistantTurn, TaskView
from simulators.record import EpisodeRecord, Step

Reply = Callable[[ModelRequest], str]
_POSITION = re.compile(r"stream position (\d+)")


@dataclass
class CannedModel:
    """A ModelClient that answers every request with `reply(request)` and keeps the requests."""

    reply: Reply
    name: str = "canned"
    requests: list[ModelRequest] = field(default_factory=list)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(AssistantTurn(text=self.reply(request)), Usage(input_tokens=1, output_tokens=1))

    def users(self) -> list[str]:
        return [request.messages[0].content for request in self.requests]


def always(reply: JSON | str) -> Reply:
    text = reply if isinstance(reply, str) else orjson.dumps(reply).decode()
    return lambda request: text


def in_order(*replies: JSON | str) -> Reply:
    """One reply per call, in call order (for methods that call one at a time)."""
    queue = [r if isinstance(r, str) else orjson.dumps(r).decode() for r in replies]
    return lambda request: queue.pop(0)


def by_position(replies: Mapping[int, JSON | str], default: str = "{}") -> Reply:
    """The reply for the episode whose stream position the request names: independent of the order in
    which concurrent calls arrive."""
    def reply(request: ModelRequest) -> str:
        match = _POSITION.search(request.messages[0].content)
        value = replies.get(int(match.group(1)), default) if match else default
        return value if isinstance(value, str) else orjson.dumps(value).decode()
    return reply


def view(position: int, body: str, domain: str = "retail") -> TaskView:
    return TaskView(task_id=f"s{position}", scenario=f"{domain}_l1", domain=domain, tier="L1",
                    timestamp=position, instruction=f"Current timestamp: {position}\n\n{body}")


def record(position: int, body: str = "Refund order #W1.", reward: float = 1.0, observation: str = "ok",
           domain: str = "retail") -> EpisodeRecord:
    steps = (
        Step(reasoning="Check the order first.", reply="", action_name="get_order_details",
             action_arguments='{"order_id":"#W1"}', observation=observation),
        Step(reasoning="", reply="Done.", action_name=None, action_arguments="", observation="", note="no call"),
        Step(reasoning="", reply="", action_name="finish", action_arguments='{"answer":"ok"}', observation="finished"),
    )
    return EpisodeRecord(task=view(position, body, domain), position=position, steps=steps, reward=reward,
                         finish_arguments={"answer": "ok"}, end_reason="finish")

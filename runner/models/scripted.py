"""The offline `scripted` model: a deterministic agent behind the same interface as real providers.

Model names: `scripted` (= `scripted:oracle`, which reads policy blocks in its system prompt) and
`scripted:docs` (documents only). It costs nothing and reports token counts estimated from text
length, so dashboards and reports have something honest-but-labelled to show.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domain import Domain
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.registry import get_domain
from simulators.scripted import SCRIPTED_VARIANTS, ScriptedAgent

__all__ = ["ScriptedModel"]


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedModel:
    def __init__(self, variant: str = "oracle", domains: Mapping[str, Domain] | None = None) -> None:
        if variant not in SCRIPTED_VARIANTS:
            raise ValueError(f"unknown scripted model 'scripted:{variant}'; known: "
                             + ", ".join(f"scripted:{v}" for v in SCRIPTED_VARIANTS))
        self._variant = variant
        self._agents: dict[str, ScriptedAgent] = {}
        self._domains = domains

    @property
    def name(self) -> str:
        return "scripted" if self._variant == "oracle" else f"scripted:{self._variant}"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        agent = self._agents.get(request.domain)
        if agent is None:
            domain = self._domains[request.domain] if self._domains else get_domain(request.domain)
            agent = self._agents[request.domain] = ScriptedAgent(domain, self._variant)
        tool_names = [str(tool["function"]["name"]) for tool in request.tools]
        turn = agent.respond(request.system, request.messages, tool_names)
        prompt = len(request.system) + sum(len(m.content) for m in request.messages)
        usage = Usage(input_tokens=max(1, prompt // 4),
                      output_tokens=_estimate_tokens(turn.reasoning + turn.text)
                      + sum(_estimate_tokens(c.arguments) for c in turn.tool_calls))
        return ModelResponse(turn=turn, usage=usage, cost_usd=0.0)

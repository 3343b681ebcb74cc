"""The offline `scripted` model: a deterministic agent behind the same interface as real providers.

Model names: `scripted` (= `scripted:oracle`, which reads policy blocks in its system prompt),
`scripted:docs` (documents only), and the audit variants `scripted:recovering`, `scripted:reckless`,
`scripted:gullible` (`simulators.scripted` says what each does).
It is not a language model: it costs nothing and reports no tokens.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domain import Domain
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.registry import get_domain
from simulators.scripted import SCRIPTED_VARIANTS, ScriptedAgent

__all__ = ["ScriptedModel"]


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
        turn = agent.respond(request.full_system, request.messages, tool_names)
        return ModelResponse(turn=turn, usage=Usage(), cost_usd=0.0)

"""The offline `scripted` model: a deterministic agent behind the same interface as real providers.

Model names: `scripted` (= `scripted:oracle`, which reads policy blocks in its system prompt),
`scripted:docs` (documents only), the audit variants `scripted:recovering`, `scripted:reckless`,
`scripted:gullible`, and `scripted:noisy=P` (deviates with probability P, drawn from the stream
replica's seed and the task, for `--replicas K`; `simulators.scripted` says what each does).
It is not a language model: it costs nothing and reports no tokens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from simulators.domain import Domain
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.registry import get_domain
from simulators.scripted import SCRIPTED_VARIANTS, ScriptedAgent

__all__ = ["ScriptedModel", "parse_variant"]

_PARAMETERIZED = ("noisy",)
"""Variants that take `=P`, a probability from 0 to 1."""


def parse_variant(text: str) -> tuple[str, float]:
    """`docs` -> ("docs", 0.0); `noisy=0.1` -> ("noisy", 0.1). ValueError with the reason otherwise."""
    variant, has_value, value = text.partition("=")
    known = ", ".join(f"scripted:{v}" + ("=P" if v in _PARAMETERIZED else "") for v in SCRIPTED_VARIANTS)
    if variant not in SCRIPTED_VARIANTS:
        raise ValueError(f"unknown scripted model 'scripted:{text}'; known: {known}")
    if variant not in _PARAMETERIZED:
        if has_value:
            raise ValueError(f"scripted:{variant} takes no '={value}'; known: {known}")
        return variant, 0.0
    try:
        probability = float(value) if has_value else math.nan
    except ValueError:
        probability = math.nan
    if not 0.0 <= probability <= 1.0:  # NaN fails too
        raise ValueError(f"scripted:{variant} needs a probability from 0 to 1, as in scripted:{variant}=0.1; "
                         f"got 'scripted:{text}'")
    return variant, probability


class ScriptedModel:
    def __init__(self, variant: str = "oracle", domains: Mapping[str, Domain] | None = None) -> None:
        self._variant, self._noise = parse_variant(variant)
        self._text = variant
        self._agents: dict[str, ScriptedAgent] = {}
        self._domains = domains

    @property
    def name(self) -> str:
        return "scripted" if self._text == "oracle" else f"scripted:{self._text}"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        agent = self._agents.get(request.domain)
        if agent is None:
            domain = self._domains[request.domain] if self._domains else get_domain(request.domain)
            agent = self._agents[request.domain] = ScriptedAgent(domain, self._variant, self._noise)
        tool_names = [str(tool["function"]["name"]) for tool in request.tools]
        turn = agent.respond(request.full_system, request.messages, tool_names, request.seed)
        return ModelResponse(turn=turn, usage=Usage(), cost_usd=0.0)

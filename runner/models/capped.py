"""A model's own cap on output tokens per call (`max_tokens`: the sweep file, per endpoint, or
`--max-tokens`), applied to every request before it is priced, so a call reserves what it may really
cost instead of the most the episode loop would allow."""

from __future__ import annotations

from dataclasses import replace

from simulators.model_api import ModelClient, ModelRequest, ModelResponse

__all__ = ["DEFAULT_MAX_TOKENS", "CappedModel"]

DEFAULT_MAX_TOKENS = 4096


class CappedModel:
    def __init__(self, inner: ModelClient, max_tokens: int) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self._inner = inner
        self.max_tokens = max_tokens

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if request.max_output_tokens > self.max_tokens:
            request = replace(request, max_output_tokens=self.max_tokens)
        return await self._inner.respond(request)

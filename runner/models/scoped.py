"""Tells a provider client which stream a request belongs to, for its prompt cache.

Innermost in the client stack (right around the provider client), so the journal's request hash, the
price and the gate all see the request without it: the scope changes no replayed answer.
"""

from __future__ import annotations

from dataclasses import replace

from simulators.model_api import ModelClient, ModelRequest, ModelResponse, Purpose

__all__ = ["CacheScopedModel", "cache_scope"]


def cache_scope(stream_id: str, purpose: Purpose) -> str:
    """One scope per stream and purpose: a method's reflection calls share no prefix with its agent's."""
    return f"{stream_id}|{purpose}"


class CacheScopedModel:
    def __init__(self, inner: ModelClient, scope: str) -> None:
        self._inner = inner
        self.scope = scope

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return await self._inner.respond(replace(request, cache_scope=self.scope))

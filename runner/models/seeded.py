"""Gives every request of a stream replica that replica's sampling seed (`--replicas K`).

Outside the journal in the client stack, so the request hash, the response cache and the record of the
call all hold the seed that was sent: a resumed replica asks with the same seed and replays its own
answers, never another replica's. Providers that take a seed send it; the others leave it out, and the
offline `scripted:noisy` agent draws its deviations from it.
"""

from __future__ import annotations

from dataclasses import replace

from simulators.model_api import ModelClient, ModelRequest, ModelResponse

__all__ = ["SeededModel", "seeded"]


class SeededModel:
    def __init__(self, inner: ModelClient, seed: int) -> None:
        self._inner = inner
        self.seed = seed

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return await self._inner.respond(replace(request, seed=self.seed))


def seeded(client: ModelClient, seed: int | None) -> ModelClient:
    """`client` with the replica's seed on every request; unchanged when the stream has none."""
    return client if seed is None else SeededModel(client, seed)

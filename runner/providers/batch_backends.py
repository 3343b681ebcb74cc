"""The batch backend for a live client: `AnthropicBatches` for an Anthropic endpoint, `OpenAIBatches` for
an OpenAI-compatible one (OpenAI, or a server offering `/v1/files` + `/v1/batches`), None for a client
that has no batch API to offer (an in-process model). Whether a server really offers one is asked by
`runner.providers.batch_probe.batch_support` (llama.cpp and vLLM answer 404)."""

from __future__ import annotations

from runner.providers.anthropic import AnthropicClient
from runner.providers.batch_anthropic import AnthropicBatches
from runner.providers.batch_api import BatchBackend
from runner.providers.batch_openai import OpenAIBatches
from runner.providers.openai_compat import OpenAICompatClient

__all__ = ["batch_backend"]


def batch_backend(client: object, completion_window: str = "24h") -> BatchBackend | None:
    """The backend sharing `client`'s connections, key, headers, retries and body builder."""
    if isinstance(client, AnthropicClient):
        return AnthropicBatches(client)
    if isinstance(client, OpenAICompatClient):
        return OpenAIBatches(client, completion_window)
    return None

"""Does an endpoint offer a batch API? One cheap GET of its batch list, with the endpoint's own key:

    OpenAI-compatible   GET {base_url}/batches?limit=1          (OpenAI; some proxies)
    Anthropic           GET {host}/v1/messages/batches?limit=1

A 200 with a list (`data`) is yes; 404, 405 or 501 (llama.cpp, vLLM, most local servers), or a 200 that is
not a batch list (a gateway's catch-all page), is no: that endpoint's calls run live (`batch = "off"` for
it). A refused key is said as such (the live probe would fail too); anything else is "could not tell".
Asked once by `probe --full`, not retried: a probe answers in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import orjson

from runner.providers.anthropic import AnthropicClient
from runner.providers.batch_http import BatchTarget
from runner.providers.failures import transport_failure
from runner.providers.openai_compat import OpenAICompatClient

__all__ = ["BatchSupport", "batch_support", "render_batch_support"]

_TIMEOUT_S = 10.0
_ABSENT = (404, 405, 501)
_LIVE = 'its calls run live (batch = "off" for this endpoint)'


@dataclass(frozen=True)
class BatchSupport:
    offered: bool | None
    """None: could not tell (a refused key, a server error, no answer)."""
    detail: str


async def batch_support(client: OpenAICompatClient | AnthropicClient) -> BatchSupport:
    target = client.batch_target()
    anthropic = isinstance(client, AnthropicClient)
    path = "/v1/messages/batches" if anthropic else "/batches"
    api = "Message Batches" if anthropic else "/files + /batches"
    try:
        response = await _get(target, path)
    except httpx.HTTPError as exc:
        return BatchSupport(None, f"could not tell: {transport_failure(exc, target.secret).message}")
    status = response.status_code
    if status in _ABSENT:
        return BatchSupport(False, f"no batch API (GET {path} answered {status}): {_LIVE}")
    if status in (401, 403):
        return BatchSupport(None, f"could not tell: the key was refused (HTTP {status}: {_text(response, target)})")
    if status != 200:
        return BatchSupport(None, f"could not tell: GET {path} answered HTTP {status}: {_text(response, target)}")
    if not _is_list(response.content):
        return BatchSupport(False, f"no batch API (GET {path} answered a page that is no batch list): {_LIVE}")
    return BatchSupport(True, f"{api} answer: --batch tests sends its test episodes there")


def render_batch_support(found: BatchSupport, width: int) -> str:
    """Its row, in the shape of `probe --full`'s compatibility table."""
    mark = {True: "yes", False: "no", None: "?"}[found.offered]
    return f"  {'batch API':<{width}}  {mark:<3}  {found.detail}"


async def _get(target: BatchTarget, path: str) -> httpx.Response:
    url = target.base_url.rstrip("/") + path
    headers = {k: v for k, v in target.headers.items() if k.lower() != "content-type"}
    return await target.http.get(url, params={"limit": 1}, headers=headers, auth=target.auth, timeout=_TIMEOUT_S)


def _is_list(content: bytes) -> bool:
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError:
        return False
    return isinstance(data, dict) and isinstance(data.get("data"), list)


def _text(response: httpx.Response, target: BatchTarget) -> str:
    try:
        data = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return target.secret.redact(response.text.strip()[:200]) or "(empty body)"
    error = data.get("error", data) if isinstance(data, dict) else data
    message = error.get("message") if isinstance(error, dict) else None
    return target.secret.redact(str(message or response.text[:200]))

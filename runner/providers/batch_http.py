"""The HTTP calls of a batch API (upload, create, poll, list, download, cancel), each through the same
retry loop and failure taxonomy as a live call: 429, 5xx and transport failures are retried with backoff
(a server-asked Retry-After honoured), 400/401/403/404/422 never; what fails for good is raised as the
taxonomy's `InfrastructureError`. The key travels only in the endpoint's `HeaderAuth` and only to the
endpoint's own origin; every message it could appear in is redacted.

`BatchTarget` is where a live client's batch API lives (`OpenAICompatClient.batch_target()`,
`AnthropicClient.batch_target()`): the same connection pool, key, headers and retrier as its live calls.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from runner.providers.failures import AttemptFailed, check_status, parse_json_object, transport_failure
from runner.providers.retry import BEFORE_RETRY, Attempt, Retrier
from runner.providers.secret import HeaderAuth, Secret
from runner.providers.taxonomy import Failure

__all__ = ["BatchHttp", "BatchTarget", "Recheck", "jsonl_lines"]

Recheck = Callable[[], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True)
class BatchTarget:
    base_url: str
    """OpenAI-compatible: the API root the live client posts `/chat/completions` under (`.../v1`);
    Anthropic: the host root (its paths start `/v1/messages`)."""
    http: httpx.AsyncClient
    secret: Secret
    auth: HeaderAuth
    retrier: Retrier
    headers: Mapping[str, str] = field(default_factory=dict)
    """The live client's headers (`anthropic-version`, extra headers); a multipart upload drops its
    content-type so httpx sets the boundary."""
    wall_clock: Callable[[], float] = time.time


class BatchHttp:
    def __init__(self, target: BatchTarget) -> None:
        self.target = target
        self._base = target.base_url.rstrip("/")

    def url(self, path_or_url: str) -> str:
        """`path` under the base URL; an absolute URL only when it is on the endpoint's own origin (a
        provider-given results URL), so the key is never sent elsewhere."""
        if path_or_url.startswith(("http://", "https://")):
            if httpx.URL(path_or_url).netloc != httpx.URL(self._base).netloc:
                raise AttemptFailed(Failure.REJECTED, "the provider named a URL on another host; not followed")
            return path_or_url
        return self._base + path_or_url

    async def json(self, method: str, path: str, *, body: Mapping[str, Any] | None = None,
                   params: Mapping[str, str | int] | None = None,
                   files: Mapping[str, tuple[str, bytes, str]] | None = None,
                   data: Mapping[str, str] | None = None, recheck: Recheck | None = None) -> dict[str, Any]:
        """One call whose answer is a JSON object (retried as a whole, garbled JSON included). `recheck`:
        asked before every retry; what it returns stands for the answer (a create whose first answer was
        lost on the wire may have been made: the retry looks for it instead of making it twice)."""
        content = orjson.dumps(body) if body is not None else None
        raw = await self._call(method, path, content=content, params=params, files=files, data=data,
                               parse=lambda text: parse_json_object(text.decode("utf-8", "replace")),
                               recheck=recheck)
        assert isinstance(raw, dict)
        return raw

    async def lines(self, path: str) -> list[dict[str, Any]]:
        """A JSONL file's objects (an OpenAI input, output or error file; Anthropic's results). Read and
        parsed whole within the attempt, so a connection dropped halfway or a garbled line is retried
        without any line being handed out twice."""
        raw = await self._call("GET", path, parse=lambda text: list(jsonl_lines(text)))
        assert isinstance(raw, list)
        return raw

    async def _call(self, method: str, path: str, *, parse: Callable[[bytes], object],
                    content: bytes | None = None, params: Mapping[str, str | int] | None = None,
                    files: Mapping[str, tuple[str, bytes, str]] | None = None,
                    data: Mapping[str, str] | None = None, recheck: Recheck | None = None) -> object:
        headers = dict(self.target.headers)
        if files is not None:
            headers.pop("content-type", None)
        target = self.target

        async def attempt(this: Attempt) -> object:
            if this.number > 1 and recheck is not None:
                found = await recheck()
                if found is not None:
                    return found
            url = self.url(path)
            try:
                response = await target.http.request(method, url, content=content, params=params, files=files,
                                                     data=data, headers=headers, auth=target.auth)
            except httpx.HTTPError as exc:
                raise transport_failure(exc, target.secret) from exc
            await check_status(response, target.secret, target.wall_clock())
            return parse(response.content)

        # A batch-API call costs nothing itself: the pricing layer's per-retry reservation is not for it.
        reset = BEFORE_RETRY.set(None)
        try:
            return (await target.retrier.call(attempt)).value
        finally:
            BEFORE_RETRY.reset(reset)


def jsonl_lines(content: bytes) -> Iterator[dict[str, Any]]:
    """The objects of a JSONL file; a line that is not a JSON object is a malformed reply."""
    for line in content.splitlines():
        if line.strip():
            yield parse_json_object(line.decode("utf-8", "replace"))

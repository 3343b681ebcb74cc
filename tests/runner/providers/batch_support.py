"""Shared pieces for the batch-API tests: a responder whose answer depends only on the request's content
(so a live call and a batched item of the same body must be answered alike), and the polling loop."""

from __future__ import annotations

from collections.abc import Sequence

from bench.mock_provider import Call, MockUsage, Recorded, Reply, Response
from runner.providers.batch_api import BatchBackend, BatchItem, BatchResult, BatchStatus
from simulators.model_api import ModelRequest
from simulators.protocol import Message
from tests.runner.providers.support import request

POLLS = 20
"""Status polls before a test gives up: a batch of the mock with no latency ends by the second."""


def content_responder(request: Recorded) -> Response:
    """Thinking, text and one tool call, and usage with cache reads and writes, all from the request's
    content alone (nothing from its bytes or arrival order)."""
    done = request.tool_results()
    last = (request.body.get("messages") or [{}])[-1]
    said = str(last.get("content"))[:40]
    usage = MockUsage(input_tokens=700 + 10 * done, output_tokens=31 + done, cached_tokens=400,
                      cache_write_tokens=120, cache_write_1h_tokens=20)
    return Reply(text=f"turn {done}: {said}", reasoning=f"thinking about {done}",
                 tool_calls=(Call("lookup", {"q": f"order {done}"}, id=f"call_{done}"),), usage=usage)


def requests_for(count: int) -> list[ModelRequest]:
    return [request(Message("user", f"Refund order {n}.")) for n in range(count)]


def items(backend: BatchBackend, requests: Sequence[ModelRequest], prefix: str = "req") -> list[BatchItem]:
    return [BatchItem(f"{prefix}-{n}", backend.body(r)) for n, r in enumerate(requests)]


async def until_ended(backend: BatchBackend, batch_id: str) -> BatchStatus:
    for _ in range(POLLS):
        status = await backend.status(batch_id)
        if status.ended:
            return status
    raise AssertionError(f"batch {batch_id} did not end within {POLLS} polls")


async def results(backend: BatchBackend, batch_id: str) -> dict[str, BatchResult]:
    found: dict[str, BatchResult] = {}
    async for result in backend.results(batch_id):
        assert result.custom_id not in found, f"{result.custom_id} handed out twice"
        found[result.custom_id] = result
    return found

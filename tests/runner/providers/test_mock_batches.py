"""The mock's batch APIs over raw HTTP: the documented objects and their lifecycle on the mock's clock
(progress, OpenAI's finalizing, output files), validation, listing, the submission counter (in process,
over HTTP and from a mock in its own process), and a server without a batch API."""

from __future__ import annotations

import httpx
import orjson
import pytest

from bench.mock_provider import BatchSettings, serve_mock
from bench.mock_server import mock_process


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _line(custom_id: str, model: str = "m", **body: object) -> bytes:
    return orjson.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                         "body": {"model": model, "messages": [{"role": "user", "content": "hi"}], **body}}) + b"\n"


async def _openai_batch(http: httpx.AsyncClient, lines: bytes) -> dict[str, object]:
    uploaded = await http.post("/v1/files", files={"file": ("in.jsonl", lines, "application/jsonl")},
                               data={"purpose": "batch"})
    assert uploaded.status_code == 200 and uploaded.json()["bytes"] == len(lines)
    created = await http.post("/v1/batches", json={"input_file_id": uploaded.json()["id"], "completion_window": "24h",
                                                   "endpoint": "/v1/chat/completions", "metadata": {"k": "v"}})
    assert created.status_code == 200, created.text
    body: dict[str, object] = created.json()
    return body


async def test_an_openai_batch_moves_through_its_documented_states_on_the_clock() -> None:
    clock = Clock()
    async with serve_mock() as mock, httpx.AsyncClient(base_url=mock.base_url) as http:
        mock.batches.clock, mock.batches.settings = clock, BatchSettings(latency_s=100)
        created = await _openai_batch(http, _line("a") + _line("b"))
        seen = []
        for now in (10, 50, 100, 100, 100):
            clock.now = 1_800_000_000.0 + now
            batch = (await http.get(f"/v1/batches/{created['id']}")).json()
            seen.append((batch["status"], batch["request_counts"]["completed"], batch["output_file_id"]))
        output = await http.get(f"/v1/files/{batch['output_file_id']}/content")
    assert created["status"] == "validating" and created["object"] == "batch" and created["metadata"] == {"k": "v"}
    assert seen[:3] == [("in_progress", 0, None), ("in_progress", 1, None), ("finalizing", 2, None)]
    assert seen[3][0] == seen[4][0] == "completed" and seen[3][2] is not None
    assert batch["completed_at"] == 1_800_000_100 and batch["request_counts"] == {"total": 2, "completed": 2,
                                                                                "failed": 0}
    lines = [orjson.loads(line) for line in output.content.splitlines()]
    # In no order a client may rely on (here b before a), as the providers warn.
    assert [(x["custom_id"], x["response"]["status_code"], x["error"]) for x in lines] == [("b", 200, None),
                                                                                           ("a", 200, None)]
    assert lines[0]["response"]["body"]["object"] == "chat.completion"


async def test_an_anthropic_batch_shows_progress_then_ends_with_a_results_url() -> None:
    clock = Clock()
    params = {"model": "c", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    async with serve_mock() as mock, httpx.AsyncClient(base_url=mock.base_url) as http:
        mock.batches.clock, mock.batches.settings = clock, BatchSettings(latency_s=10)
        created = (await http.post("/v1/messages/batches", json={"requests": [
            {"custom_id": "x", "params": params}, {"custom_id": "y", "params": params}]})).json()
        clock.now += 5
        halfway = (await http.get(f"/v1/messages/batches/{created['id']}")).json()
        clock.now += 5
        ended = (await http.get(f"/v1/messages/batches/{created['id']}")).json()
        results = await http.get(ended["results_url"])
        listed = (await http.get("/v1/messages/batches", params={"limit": 1})).json()
    assert created["processing_status"] == "in_progress" and created["results_url"] is None
    assert halfway["request_counts"] == {"processing": 1, "succeeded": 1, "errored": 0, "canceled": 0, "expired": 0}
    assert ended["processing_status"] == "ended" and ended["ended_at"].endswith("Z")
    lines = [orjson.loads(line) for line in results.content.splitlines()]
    assert sorted((x["custom_id"], x["result"]["type"]) for x in lines) == [("x", "succeeded"), ("y", "succeeded")]
    assert lines[0]["result"]["message"]["type"] == "message"
    assert listed["data"][0]["id"] == created["id"] and listed["has_more"] is False


async def test_invalid_batches_fail_validation_or_are_refused() -> None:
    async with serve_mock() as mock, httpx.AsyncClient(base_url=mock.base_url) as http:
        duplicated = await _openai_batch(http, _line("a") + _line("a"))
        mixed = await _openai_batch(http, _line("a") + _line("b", model="other"))
        failed = [(await http.get(f"/v1/batches/{b['id']}")).json() for b in (duplicated, mixed)]
        refused = await http.post("/v1/messages/batches", json={"requests": [
            {"custom_id": "has space", "params": {"model": "c", "max_tokens": 8, "messages": []}}]})
        wrong_window = await http.post("/v1/batches", json={"input_file_id": duplicated["input_file_id"],
                                                            "endpoint": "/v1/chat/completions",
                                                            "completion_window": "1h"})
    assert [b["status"] for b in failed] == ["failed", "failed"]
    assert "more than once" in failed[0]["errors"]["data"][0]["message"]
    assert failed[1]["errors"]["data"][0]["code"] == "mismatched_model"
    assert refused.status_code == 400 and refused.json()["error"]["type"] == "invalid_request_error"
    assert wrong_window.status_code == 400


async def test_the_submission_counter_counts_each_custom_id_in_process_and_over_http() -> None:
    async with serve_mock() as mock, httpx.AsyncClient(base_url=mock.base_url) as http:
        await _openai_batch(http, _line("a") + _line("b"))
        await _openai_batch(http, _line("a"))
        over_http = (await http.get("/_mock/batch_submissions")).json()
    assert over_http == dict(mock.batches.submissions) == {"a": 2, "b": 1}


async def test_a_mock_in_its_own_process_serves_batches_and_counts_them() -> None:
    async with mock_process(0.0, 2, batch=BatchSettings(latency_s=0)) as url, \
            httpx.AsyncClient(base_url=url) as http:
        created = await _openai_batch(http, _line("p"))
        listed = (await http.get("/v1/batches", params={"limit": 1})).json()
        counted = (await http.get("/_mock/batch_submissions")).json()
    assert listed["data"][0]["id"] == created["id"] and counted == {"p": 1}


@pytest.mark.parametrize("path", ["/v1/batches?limit=1", "/v1/files/file-1", "/v1/messages/batches?limit=1"])
async def test_a_server_without_a_batch_api_answers_404(path: str) -> None:
    async with serve_mock() as mock, httpx.AsyncClient(base_url=mock.base_url) as http:
        mock.batches.offered = False
        answer = await http.get(path)
        upload = await http.post("/v1/files", files={"file": ("in.jsonl", b"{}", "application/jsonl")})
    assert answer.status_code == 404 and upload.status_code == 404


async def test_a_server_without_a_batch_api_in_its_own_process() -> None:
    async with mock_process(0.0, 2, batch=None) as url, httpx.AsyncClient(base_url=url) as http:
        answer = await http.get("/v1/batches", params={"limit": 1})
        live = await http.post("/v1/chat/completions", json={"model": "m", "messages": []})
    assert answer.status_code == 404 and live.status_code == 200


async def test_an_error_fraction_fails_the_same_custom_ids_every_time() -> None:
    ids = [f"item-{n}" for n in range(200)]
    async with serve_mock() as mock, httpx.AsyncClient(base_url=mock.base_url) as http:
        mock.batches.settings = BatchSettings(error_fraction=0.25)
        made = [await _openai_batch(http, b"".join(_line(i) for i in ids)) for _ in range(2)]
        for batch in made:
            await http.get(f"/v1/batches/{batch['id']}")  # finalizing
        errored = []
        for batch in made:
            shown = (await http.get(f"/v1/batches/{batch['id']}")).json()
            lines = (await http.get(f"/v1/files/{shown['error_file_id']}/content")).content.splitlines()
            errored.append({orjson.loads(line)["custom_id"] for line in lines})
    assert errored[0] == errored[1] and 25 <= len(errored[0]) <= 75  # a quarter of 200, give or take

"""`runs rm` of a run with outstanding batches: each is cancelled through its endpoint's batch API when the
key is in the environment (against the mock over loopback, which records every cancel), looked up by
label when it was journaled before its id, and otherwise named with the request that cancels it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.mock_provider import BatchSettings, serve_mock
from runner.cli import main
from runner.cli.batch_cancel import cancel_outstanding
from runner.journal import Batch, NewRun, open_journal, read_only
from runner.journal.housekeeping import remove_run
from runner.providers import make_http_client
from runner.providers.batch_anthropic import AnthropicBatches
from runner.providers.batch_api import BatchItem
from runner.providers.batch_openai import OpenAIBatches
from tests.runner.providers.support import KEY, anthropic_client, openai_client

RUN = "run-rm"


def _config(base_url: str) -> str:
    return orjson.dumps({"models": ["mockgpt", "mockclaude"], "endpoints": {
        "mockgpt": {"kind": "openai", "model": "gpt-x", "base_url": f"{base_url}/v1", "api_key_env": "MOCK_GPT_KEY"},
        "mockclaude": {"kind": "anthropic", "model": "claude-x", "base_url": base_url,
                       "api_key_env": "MOCK_CLAUDE_KEY"}}}).decode()


Row = tuple[str, str, str, str, str]
"""A provider batch as the test plants it: label, api, endpoint, status, batch id."""


def _row(label: str, api: str, endpoint: str, status: str, batch_id: str = "") -> Row:
    return label, api, endpoint, status, batch_id


async def _journal(path: Path, config: str, rows: list[Row], status: str = "interrupted") -> None:
    """Through the batcher's own writers: label and item first, then the id, then any end."""
    batch = Batch().new_run(NewRun(RUN, 1.0, 1.0, config, "x", "d", "f", "{}", "c", None, 999_999), [])
    later = Batch()
    for label, api, endpoint, state, batch_id in rows:
        model = "mockgpt" if api == "openai" else "mockclaude"
        batch.provider_batch(RUN, label, api, endpoint, model, [(f"{label}-0", "u")], 0, 0, 1_000.0)
        if state != "submitting":
            later.batch_created(RUN, label, batch_id)
        if state not in ("submitting", "submitted"):
            later.batch_status(RUN, label, state, "ended", 2_000.0)
    async with open_journal(path) as journal:
        await journal.commit(batch)
        await journal.commit(later.run_ended(RUN, status, "", 2.0))


def _one(prefix: str) -> list[BatchItem]:
    return [BatchItem(f"{prefix}-0", {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]})]


async def test_outstanding_batches_are_cancelled_through_the_batch_api(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    lines: list[str] = []
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.settings = BatchSettings(latency_s=3600)  # still processing when the run is removed
        mock.batches.key = KEY
        openai = OpenAIBatches(openai_client(mock.base_url, http))
        anthropic = AnthropicBatches(anthropic_client(mock.base_url, http))
        submitted = await openai.submit(_one("a"), label="L-submitted")
        labelled = await openai.submit(_one("b"), label="L-submitting")  # created, its id never journaled
        claude = await anthropic.submit(_one("c"), label="L-claude")
        done = await openai.submit(_one("d"), label="L-done")
        v1 = f"{mock.base_url}/v1"
        await _journal(path, _config(mock.base_url), [
            _row("L-submitted", "openai", v1, "submitted", submitted), _row("L-submitting", "openai", v1, "submitting"),
            _row("L-never", "openai", v1, "submitting"),
            _row("L-claude", "anthropic", mock.base_url, "submitted", claude),
            _row("L-done", "openai", v1, "collected", done)])
        count = await cancel_outstanding(path, RUN, lines.append,
                                         environ={"MOCK_GPT_KEY": KEY, "MOCK_CLAUDE_KEY": KEY})
        cancels = sorted(path for method, path in mock.batches.calls if method == "POST" and path.endswith("/cancel"))
        cancelled = {batch_id for batch_id, b in mock.batches.batches.items() if b.cancel_at is not None}
    assert count == 4  # the collected batch is not outstanding
    assert cancelled == {submitted, labelled, claude}
    assert cancels == sorted([f"/v1/batches/{submitted}/cancel", f"/v1/batches/{labelled}/cancel",
                              f"/v1/messages/batches/{claude}/cancel"])
    text = "\n".join(lines)
    assert f"cancelled openai batch {submitted}" in text and f"cancelled anthropic batch {claude}" in text
    assert "L-never (1 requests, submitting) was never created" in text
    assert KEY not in text
    assert (await remove_run(path, RUN)).run_id == RUN
    async with read_only(path) as reader:
        assert await reader.outstanding_batches(RUN) == []


def test_runs_rm_without_the_key_names_each_batch_and_how_to_cancel_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio

    path = tmp_path / "j.sqlite"
    base = "http://127.0.0.1:9"  # nothing is sent: no key
    monkeypatch.delenv("MOCK_GPT_KEY", raising=False)
    monkeypatch.delenv("MOCK_CLAUDE_KEY", raising=False)
    anyio.run(_journal, path, _config(base), [_row("L1", "openai", f"{base}/v1", "submitted", "batch_abc"),
                                              _row("L2", "anthropic", base, "submitted", "msgbatch_xyz"),
                                              _row("L3", "anthropic", base, "submitting")])
    assert main(["runs", "rm", RUN, "--journal", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Run run-rm has 3 batches outstanding at a provider, which may still process and bill it" in out
    assert ("NOT cancelled (MOCK_GPT_KEY is not set): openai batch batch_abc (1 requests, submitted); cancel it with "
            f"`curl -X POST {base}/v1/batches/batch_abc/cancel -H \"Authorization: Bearer $MOCK_GPT_KEY\"`") in out
    assert (f"`curl -X POST {base}/v1/messages/batches/msgbatch_xyz/cancel -H \"x-api-key: $MOCK_CLAUDE_KEY\" "
            "-H \"anthropic-version: 2023-06-01\"`") in out
    assert f"anthropic batch L3 (1 requests, submitting); its create may have reached {base}" in out
    assert "Removed run run-rm" in out


def test_a_run_being_written_is_left_to_remove_run_which_refuses_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    import anyio

    path = tmp_path / "j.sqlite"

    async def plant() -> None:
        await _journal(path, _config("http://127.0.0.1:9"), [_row("L1", "openai", "http://127.0.0.1:9/v1",
                                                                  "submitted", "batch_abc")], status="running")
        async with open_journal(path) as journal:
            await journal.commit(Batch().run_started(RUN, os.getpid()))

    anyio.run(plant)
    assert main(["runs", "rm", RUN, "--journal", str(path)]) == 2
    captured = capsys.readouterr()
    assert "being written" in captured.err and "outstanding" not in captured.out

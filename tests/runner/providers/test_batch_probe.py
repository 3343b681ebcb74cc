"""Whether an endpoint offers a batch API, as `probe --full` says it: yes for the mock's OpenAI and
Anthropic batch APIs, no for a server without one (llama.cpp, vLLM: 404), a refused key said as such,
and the row in the command's output."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from bench.mock_provider import serve_mock, vllm_info
from bench.mock_quirks import MODES, with_quirks
from runner.cli import main
from runner.providers import make_http_client
from runner.providers.batch_probe import batch_support, render_batch_support
from tests.runner.providers.support import KEY, anthropic_client, openai_client


@pytest.mark.parametrize("make", [openai_client, anthropic_client])
async def test_an_endpoint_with_a_batch_api_is_told_apart_from_one_without(make: object) -> None:
    async with serve_mock() as mock, make_http_client() as http:
        client = make(mock.base_url, http)  # type: ignore[operator]
        offered = await batch_support(client)
        mock.batches.offered = False
        absent = await batch_support(client)
    assert offered.offered is True and "--batch tests sends" in offered.detail
    assert absent.offered is False and "no batch API" in absent.detail and "404" in absent.detail
    assert all(not path.startswith("/v1/files") for _, path in mock.batches.calls)  # one GET of the list each
    assert len(mock.batches.calls) == 2


async def test_a_vllm_like_server_offers_none_and_runs_live() -> None:
    async with serve_mock(with_quirks(MODES["compliant"])) as mock, make_http_client() as http:
        mock.info, mock.batches.offered = vllm_info(), False
        found = await batch_support(openai_client(mock.base_url, http))
    assert found.offered is False and found.detail.endswith('its calls run live (batch = "off" for this endpoint)')
    assert render_batch_support(found, 12) == f"  {'batch API':<12}  no   {found.detail}"


async def test_a_refused_key_is_said_as_such_without_the_key() -> None:
    async with serve_mock() as mock, make_http_client() as http:
        mock.batches.key = "sk-another-key"
        found = await batch_support(anthropic_client(mock.base_url, http))
    assert found.offered is None and "the key was refused (HTTP 401" in found.detail and KEY not in found.detail


@pytest.mark.parametrize(("offered", "row"), [(True, "batch API                  yes  /files + /batches answer"),
                                              (False, "batch API                  no   no batch API (GET /batches "
                                                      "answered 404)")])
async def test_probe_full_prints_the_batch_api_row(offered: bool, row: str, capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    async with serve_mock() as mock:
        mock.batches.offered = offered
        argv = ["probe", f"openai-compatible:smol@{mock.base_url}/v1", "--full", "--context-tokens", "2048"]
        code = await anyio.to_thread.run_sync(main, argv)
    out = capsys.readouterr().out
    assert code == 0 and row in out
    assert out.index("parallel slots") < out.index("batch API") < out.index("Sweep file settings")


async def test_probe_full_prints_the_row_for_an_anthropic_endpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MOCK_ANTHROPIC_KEY", KEY)
    async with serve_mock() as mock:
        sweep = tmp_path / "sweep.toml"
        sweep.write_text(f'[endpoints.claude]\nkind = "anthropic"\nmodel = "claude-test"\n'
                         f'base_url = "{mock.base_url}"\napi_key_env = "MOCK_ANTHROPIC_KEY"\n')
        code = await anyio.to_thread.run_sync(main, ["probe", "claude", "--config", str(sweep), "--full"])
    out = capsys.readouterr().out
    assert code == 0 and "speaks Anthropic Messages" in out
    assert "batch API" in out and "yes  Message Batches answer" in out
    assert ("GET", "/v1/messages/batches") in mock.batches.calls and KEY not in out


async def test_each_live_client_gets_its_providers_backend() -> None:
    from runner.providers.batch_anthropic import AnthropicBatches
    from runner.providers.batch_backends import batch_backend
    from runner.providers.batch_openai import OpenAIBatches

    async with serve_mock() as mock, make_http_client() as http:
        openai = batch_backend(openai_client(mock.base_url, http))
        anthropic = batch_backend(anthropic_client(mock.base_url, http))
    assert isinstance(openai, OpenAIBatches) and isinstance(anthropic, AnthropicBatches)
    assert batch_backend(object()) is None

"""`shiftbench probe --full` against the loopback mock in each of its server modes: it reports the
capabilities the mock was given, and the sweep-file settings follow from them."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from bench.mock_provider import Call, Failure, Reply, llama_cpp_info, serve_mock, vllm_info
from bench.mock_quirks import MODES, with_quirks
from runner.cli import main
from runner.models.compat import (
    Compatibility,
    check_compatibility,
    context_limit,
    render_compatibility,
    sweep_settings,
)
from runner.providers import make_http_client
from tests.runner.providers.support import fast_retrier, openai_client

NAMES = ("tool calls, not streamed", "tool calls, streamed", "usage when streamed", "tool results visible",
         "content: null accepted", "context length", "prompt_cache_key accepted", "parallel slots")
EXPECTED = {
    #                    calls  streamed usage  visible null   context accepted, cache key, slots, limit
    "compliant":        (True, True, True, True, True, True, True, None, None),
    "strict":           (True, True, True, True, True, False, False, None, 32_768),
    "llama.cpp":        (True, True, True, True, True, False, True, None, 8_192),
    "llama.cpp-small-model": (True, True, True, True, True, False, True, None, 8_192),
    "llama-cpp-python": (True, False, False, False, False, False, True, None, 2_048),
}


@pytest.mark.parametrize("mode", sorted(EXPECTED))
async def test_probe_full_reports_the_capabilities_the_mock_was_given(mode: str) -> None:
    async with serve_mock(with_quirks(MODES[mode])) as mock, make_http_client() as http:
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=40_000)
    *supported, limit = EXPECTED[mode]
    assert [found.supports(name) for name in NAMES] == supported, render_compatibility(found)
    assert found.context_tokens == limit
    quirks = MODES[mode]
    assert found.tool_choice == ("auto" if quirks.tool_calls_need_auto else
                                 "required" if quirks.tool_calls_need_required else "")


async def test_a_call_with_pretty_printed_arguments_stays_on_its_row_of_the_table() -> None:
    # llama.cpp returns a grammar-forced call's arguments as the model wrote them, newlines included.
    call = Reply(tool_calls=(Call("get_weather", '{\n  "city": "Paris"\n}'),))
    async with serve_mock(with_quirks(MODES["llama.cpp"])) as mock, make_http_client() as http:
        mock.script(call, call)
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=1_024)
    table = render_compatibility(found).splitlines()
    assert len(table) == 1 + len(NAMES)
    assert found.findings["tool calls, not streamed"].detail == 'get_weather({ "city": "Paris" })'


async def test_settings_for_llama_cpp_python_turn_streaming_off_and_ask_for_tool_calls() -> None:
    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock, make_http_client() as http:
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=4_096)
    toml = sweep_settings("local", "openai-compatible", "smol", mock.base_url + "/v1", found)
    assert "stream = false" in toml
    assert "[endpoints.local.extra_body.agent]" in toml and 'tool_choice = "auto"' in toml
    assert "drops tool results" in toml


async def test_settings_turn_prompt_cache_key_off_where_a_server_refuses_it_and_suggest_it_where_taken() -> None:
    async with serve_mock(with_quirks(MODES["strict"])) as mock, make_http_client() as http:
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=1_024)
        refused = mock.requests[-1]
    assert refused.body.get("prompt_cache_key") == "shiftbench-probe"  # the check's own request, refused
    assert "prompt_cache_key = false" in sweep_settings("gw", "openai", "m", mock.base_url + "/v1", found)
    assert "prompt_cache_key" not in sweep_settings("gw", "openai-compatible", "m", mock.base_url + "/v1", found)
    async with serve_mock(with_quirks(MODES["compliant"])) as mock, make_http_client() as http:
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=1_024)
    assert "# prompt_cache_key = true" in sweep_settings("gw", "openai-compatible", "m", mock.base_url + "/v1",
                                                         found)
    assert "prompt_cache_key" not in sweep_settings("gw", "openai", "m", mock.base_url + "/v1", found)


async def test_settings_for_a_compliant_server_change_nothing() -> None:
    async with serve_mock(with_quirks(MODES["compliant"])) as mock, make_http_client() as http:
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=1_024)
    toml = sweep_settings("local", "openai-compatible", "m", mock.base_url + "/v1", found)
    assert "stream" not in toml and "extra_body" not in toml and "WARNING" not in toml


@pytest.mark.parametrize(("message", "limit"), [
    ("HTTP 400: This model's maximum context length is 32768 tokens. However, you requested 40000", 32768),
    ("HTTP 400: request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it", 8192),
    ("HTTP 400: Requested tokens (3000) exceed context window of 2048", 2048),
    ("HTTP 400: something else", None),
])
def test_the_context_limit_is_read_from_each_servers_wording(message: str, limit: int | None) -> None:
    assert context_limit(message) == limit


async def test_the_command_prints_the_table_and_the_settings(capsys: pytest.CaptureFixture[str]) -> None:
    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock:
        argv = ["probe", f"openai-compatible:smol@{mock.base_url}/v1", "--full", "--context-tokens", "4096"]
        code = await anyio.to_thread.run_sync(main, argv)
    out = capsys.readouterr().out
    assert code == 0
    assert "tool calls, streamed" in out and "[endpoints.smol]" in out and "stream = false" in out
    assert f'base_url = "{mock.base_url}/v1"' in out


async def test_the_printed_settings_of_a_server_on_this_machine_run_as_printed(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Pasted into a sweep file unchanged, they run (they were refused: "no price known for smol")."""
    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock:
        argv = ["probe", f"openai-compatible:smol@{mock.base_url}/v1", "--full", "--context-tokens", "4096"]
        assert await anyio.to_thread.run_sync(main, argv) == 0
        printed = capsys.readouterr().out.split("Sweep file settings for it:\n", 1)[1]
        assert '[prices."smol"]' in printed and "output = 0" in printed
        sweep = tmp_path / "sweep.toml"
        sweep.write_text(f'models = ["smol"]\nmethods = ["blind"]\nscenarios = ["retail_l1"]\npilot = 1\n'
                         f'dataset = "{built_suite}"\n\n{printed}')
        # A real process (a run installs its signal handlers, which only a main thread may).
        ran = await anyio.run_process([sys.executable, "-m", "runner.cli", "run", "--config", str(sweep), "--display",
                                       "none", "--journal", str(tmp_path / "j.sqlite")], check=False)
    assert ran.returncode == 0, ran.stderr.decode()
    assert b"Journal: " in ran.stdout and ran.stderr == b""


def test_a_remote_server_is_left_for_the_user_to_price() -> None:
    toml = sweep_settings("gw", "openai", "m", "https://api.example.invalid/v1", Compatibility(model="m"))
    assert '# [prices."gw"] with its input' in toml and "--allow-unpriced" in toml
    assert "\n[prices." not in toml


async def test_probe_full_reads_llama_cpps_slots_and_suggests_a_matching_max_concurrency() -> None:
    async with serve_mock(with_quirks(MODES["llama.cpp"])) as mock, make_http_client() as http:
        mock.info = llama_cpp_info(slots=2, n_ctx=4096)
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=1_024)
    assert found.slots == 2 and found.supports("parallel slots") is True
    assert "/props" in mock.gets
    assert found.context_tokens == 4096  # the 1,024-token prompt passed; the server published its context
    toml = sweep_settings("local", "openai-compatible", "smol", mock.base_url + "/v1", found)
    assert "\nmax_concurrency = 2 " in toml


async def test_probe_full_falls_back_to_llama_cpps_slots_page_and_reads_vllms_context() -> None:
    async with serve_mock(with_quirks(MODES["llama.cpp"])) as mock, make_http_client() as http:
        mock.info = {"/slots": llama_cpp_info(slots=3)["/slots"]}  # /props unavailable
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=1_024)
    assert found.slots == 3
    async with serve_mock(with_quirks(MODES["compliant"])) as mock, make_http_client() as http:
        mock.info = vllm_info(max_model_len=16_384)
        found = await check_compatibility(openai_client(mock.base_url, http), context_probe_tokens=1_024)
    assert found.slots is None and found.supports("parallel slots") is None
    assert found.context_tokens == 16_384
    assert "max_concurrency" not in sweep_settings("local", "openai-compatible", "m", mock.base_url + "/v1", found)


async def test_probe_full_names_every_request_mode_the_server_answered_with_a_server_error() -> None:
    async with serve_mock(with_quirks(MODES["llama.cpp-small-model"])) as mock, make_http_client() as http:
        # The first tool call, not streamed, gets a 500 twice (the check's two attempts), as llama.cpp
        # answers a reply that does not parse in its tool-call format.
        peg = "The model produced output that does not match the expected peg-native format"
        mock.script(Failure(500, peg), Failure(500, peg))
        client = openai_client(mock.base_url, http, fast_retrier(max_attempts=2))
        found = await check_compatibility(client, context_probe_tokens=1_024)
    table = render_compatibility(found)
    assert list(found.server_errors) == ["tool call, not streamed"]
    assert "tool call, not streamed: HTTP 500: The model produced output" in table


async def test_a_runs_probe_learns_the_servers_slots_and_says_when_max_concurrency_exceeds_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    async with serve_mock(with_quirks(MODES["llama.cpp"])) as mock:
        mock.info = llama_cpp_info(slots=1)
        code = await anyio.to_thread.run_sync(main, ["probe", f"openai-compatible:smol@{mock.base_url}/v1"])
    out = capsys.readouterr().out
    assert code == 0
    assert (f"{mock.base_url}/v1: 1 parallel slot (llama.cpp /props); max_concurrency is 32, so up to 31 calls "
            "at a time wait at the server") in out

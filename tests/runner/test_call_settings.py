"""The settings a user expects on every run: max turns per episode, temperature, output tokens per call
and a per-call timeout. Each is recorded in the run's config (so reports show it and resume refuses a
changed one) and does what it says: against the scripted agent, a real loopback provider, and one that
never answers."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import asdict
from pathlib import Path

import orjson
import pytest

from bench.mock_provider import Recorded, Reply, Response, serve_mock, tool_loop
from runner.cli import main
from runner.config.settings import SweepConfig, config_from_json, config_hash
from runner.models.registry import build_models, close_models
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelRequest
from simulators.protocol import Message
from tests.runner.test_cli_errors import one_error_line
from tests.runner.test_promises import cli

PILOT = ["--methods", "blind", "--scenarios", "banking_l1", "--pilot", "1", "--display", "none"]


def _episodes(journal: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(journal) as db:
        return db.execute("SELECT turns, end_reason FROM episodes").fetchall()


def test_settings_are_recorded_reported_and_max_turns_ends_episodes(
    built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    free = tmp_path / "free.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--journal", str(free), *PILOT]) == 0
    assert max(turns for turns, _ in _episodes(free)) > 2  # the scripted agent needs more than two turns

    journal = tmp_path / "j.sqlite"
    settings = ["--max-turns", "2", "--temperature", "0.3", "--call-timeout", "45", "--max-tokens", "1000"]
    assert main(["run", "--dataset", str(built_suite), "--journal", str(journal), *PILOT, *settings]) == 0
    episodes = _episodes(journal)
    assert episodes and all(turns <= 2 for turns, _ in episodes)
    assert ("turn_limit" in {reason for _, reason in episodes})
    assert all(reason != "turn_limit" or turns == 2 for turns, reason in episodes)

    with sqlite3.connect(journal) as db:
        run_id, stored = db.execute("SELECT run_id, config FROM runs").fetchone()
    recorded = orjson.loads(stored)
    assert (recorded["max_turns"], recorded["temperature"], recorded["call_timeout"], recorded["max_tokens"]) == (
        2, 0.3, 45.0, 1000)
    capsys.readouterr()
    assert main(["report", run_id, "--json", "--journal", str(journal)]) == 0
    provenance = orjson.loads(capsys.readouterr().out)["provenance"]["config"]
    assert (provenance["max_turns"], provenance["temperature"], provenance["call_timeout"]) == (2, 0.3, 45.0)


def test_resume_refuses_a_changed_setting(built_suite: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--journal", str(journal), *PILOT, "--max-turns", "3",
                 "--temperature", "0.5", "--call-timeout", "60"]) == 0
    with sqlite3.connect(journal) as db:
        run_id, stored = db.execute("SELECT run_id, config FROM runs").fetchone()
        db.execute("UPDATE runs SET status = 'interrupted'")
    for before, after in (('"max_turns":3', '"max_turns":4'), ('"temperature":0.5', '"temperature":0.7'),
                          ('"call_timeout":60.0', '"call_timeout":600.0')):
        assert before in stored
        with sqlite3.connect(journal) as db:
            db.execute("UPDATE runs SET config = ?", (stored.replace(before, after),))
        capsys.readouterr()
        assert main(["resume", run_id, "--journal", str(journal), "--display", "none"]) == 2
        assert "stored config does not match its hash" in one_error_line(capsys)
    with sqlite3.connect(journal) as db:
        db.execute("UPDATE runs SET config = ?", (stored,))
    assert main(["resume", run_id, "--journal", str(journal), "--display", "none"]) == 0


def test_a_config_at_the_new_settings_defaults_hashes_as_runs_journaled_before_them() -> None:
    """A run journaled before these settings existed stored a hash over the older keys: it still resumes."""
    older = ("models", "methods", "scenarios", "dataset", "block_size", "seed", "pilot", "judge", "endpoints",
             "repeats", "max_tokens")
    view = {key: asdict(SweepConfig())[key] for key in older}
    before = hashlib.sha256(orjson.dumps(view, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert config_hash(SweepConfig()) == before
    for changed in (SweepConfig(max_turns=99), SweepConfig(temperature=0.0), SweepConfig(call_timeout=60.0)):
        assert config_hash(changed) != before


async def test_temperature_reaches_every_openai_compatible_body_only_when_set(built_suite: Path,
                                                                              tmp_path: Path) -> None:
    async with serve_mock() as mock:
        argv = ["run", "--dataset", str(built_suite), "--models", f"openai-compatible:m@{mock.base_url}/v1",
                "--allow-unpriced", *PILOT]
        done = await cli([*argv, "--temperature", "0.25", "--journal", str(tmp_path / "a.sqlite")])
        assert done.returncode == 0, done.stderr
        warm = list(mock.requests)
        mock.requests.clear()
        done = await cli([*argv, "--journal", str(tmp_path / "b.sqlite")])
        assert done.returncode == 0, done.stderr
        default = list(mock.requests)
    assert warm[0].body["max_tokens"] == 8  # the probe carries it too: a model that refuses it stops there
    assert len(warm) > 2 and all(request.body["temperature"] == 0.25 for request in warm)
    assert len(default) > 2 and not any("temperature" in request.body for request in default)


async def test_temperature_reaches_anthropic_bodies_and_is_checked_against_what_anthropic_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MOCK_ANTHROPIC_KEY", "sk-ant-x")
    async with serve_mock() as mock:
        endpoint = {"kind": "anthropic", "model": "claude-x", "base_url": mock.base_url,
                    "api_key_env": "MOCK_ANTHROPIC_KEY"}
        config = SweepConfig(models=("claude",), endpoints={"claude": endpoint}, temperature=0.5)
        models = build_models(config)
        try:
            request = ModelRequest(system="s", messages=(Message(role="user", content="hi"),), max_output_tokens=64)
            await models["claude"].client.respond(request)
            assert models["claude"].probe is not None
            await models["claude"].probe.respond(request)
        finally:
            await close_models(models)
    assert [r.dialect for r in mock.requests] == ["anthropic", "anthropic"]
    assert all(r.body["temperature"] == 0.5 for r in mock.requests)
    with pytest.raises(ShiftbenchInputError, match="Anthropic models take 0 to 1, got 1.5 for 'claude'"):
        build_models(SweepConfig(models=("claude",), endpoints={"claude": endpoint}, temperature=1.5))
    thinking = {**endpoint, "thinking_budget": 2048}
    with pytest.raises(ShiftbenchInputError, match="Anthropic refuses a temperature with extended thinking"):
        build_models(SweepConfig(models=("claude",), endpoints={"claude": thinking}, temperature=0.5))


async def test_call_timeout_ends_an_attempt_that_never_answers_as_a_timeout(built_suite: Path,
                                                                            tmp_path: Path) -> None:
    """Not streamed, so no stall timeout applies: only the per-call timeout can end the wait (the default
    900 s would outlast the test's own limit). The probe is answered; every agent call hangs."""
    answer = tool_loop()

    def respond(request: Recorded) -> Response:
        return Reply(delay_s=3600.0) if request.tools() else answer(request)

    journal = tmp_path / "j.sqlite"
    async with serve_mock(respond) as mock:
        sweep = tmp_path / "sweep.toml"
        sweep.write_text(f'models = ["hang"]\ncall_timeout = 3\nmax_request_attempts = 1\nallow_unpriced = true\n'
                         f'[endpoints.hang]\nkind = "openai-compatible"\nmodel = "m"\n'
                         f'base_url = "{mock.base_url}/v1"\nstream = false\n')
        done = await cli(["run", "--config", str(sweep), "--dataset", str(built_suite), "--journal", str(journal),
                          *PILOT])
        agent_calls = [request for request in mock.requests if request.tools()]
    assert done.returncode == 1, done.stderr
    # Every episode in flight (blind learns nothing, so its windows start together) made one call.
    assert agent_calls and all(request.body["stream"] is False for request in agent_calls)
    with sqlite3.connect(journal) as db:
        status, reason = db.execute("SELECT status, stop_reason FROM runs").fetchone()
        failed = db.execute("SELECT error FROM model_calls WHERE status = 'failed'").fetchall()
    assert status == "failed" and "attempt ran past 3s" in reason, reason
    assert failed and all(error.startswith("ProviderTimeout: attempt ran past 3s") for (error,) in failed)


def test_a_run_journaled_before_max_tokens_existed_resumes_with_its_default(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--journal", str(journal), *PILOT]) == 0
    with sqlite3.connect(journal) as db:
        run_id, stored = db.execute("SELECT run_id, config FROM runs").fetchone()
    # What that version wrote: the config without the key, hashed as it then was (over the keys it had).
    old = orjson.loads(stored)
    del old["max_tokens"]
    view = {key: value for key, value in config_from_json(stored).results_view().items() if key in old}
    old_hash = hashlib.sha256(orjson.dumps(view, option=orjson.OPT_SORT_KEYS)).hexdigest()
    with sqlite3.connect(journal) as db:
        # The key dropped but the hash left as it was: an edit, refused.
        db.execute("UPDATE runs SET status = 'interrupted', config = ?", (orjson.dumps(old).decode(),))
    capsys.readouterr()
    assert main(["resume", run_id, "--journal", str(journal), "--display", "none"]) == 2
    assert "stored config does not match its hash" in one_error_line(capsys)
    with sqlite3.connect(journal) as db:
        db.execute("UPDATE runs SET config_hash = ?", (old_hash,))
    assert main(["resume", run_id, "--journal", str(journal), "--display", "none"]) == 0

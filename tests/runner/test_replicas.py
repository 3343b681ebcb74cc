"""Stream replicas (`--replicas K`): ids, the config key, seeds through the client stack to a real loopback
server, and the offline `scripted:noisy=P` agent."""

from __future__ import annotations

import hashlib
from dataclasses import fields, make_dataclass, replace
from pathlib import Path

import orjson
import pytest

from bench.mock_provider import serve_mock, tool_loop
from runner.config.plan import plan_streams
from runner.config.settings import SweepConfig, config_hash, load_config_file
from runner.models.journaled import request_hash
from runner.models.scripted import ScriptedModel, parse_variant
from runner.schedule.sweep import start_sweep
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelRequest
from simulators.protocol import Message
from simulators.scripted import deviates, deviation_variance
from tests.fakes import toy_scenario
from tests.support import quiet

KEY = "sk-loopback-test-key-0123456789"
PRICE = {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 1.0}


def test_replica_zero_keeps_todays_ids_and_later_replicas_name_themselves() -> None:
    scenario = toy_scenario(windows=2, serving_per_window=2, test_per_window=2)
    alone = plan_streams(["m"], ["counting"], [scenario], learns=lambda n: True, repeats=2)
    three = plan_streams(["m"], ["counting"], [scenario], learns=lambda n: True, repeats=2, replicas=3)
    assert [s.replica for s in three] == [0, 1, 2]
    assert [u.unit_id for u in three[0].units()] == [u.unit_id for u in alone[0].units()]
    assert three[0].stream_id == "m|counting|toy_l1" and three[2].stream_id == "m|counting|toy_l1|replica2"
    ids = [u.unit_id for s in three for u in s.units()]
    assert len(ids) == len(set(ids)) == 3 * len(list(alone[0].units()))
    assert "m|counting|toy_l1|replica1|test|t1-1|r1" in ids
    # One replica sends no seed (as before replicas existed); several send their index.
    assert alone[0].sampling_seed is None and [s.sampling_seed for s in three] == [0, 1, 2]


def test_replicas_is_a_sweep_file_key_hashed_only_when_set(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('models = ["scripted"]\nreplicas = 4\n')
    assert load_config_file(path).replicas == 4
    # A config journaled before replicas existed hashes as it did.
    assert config_hash(SweepConfig()) == config_hash(replace(SweepConfig(), replicas=1))
    assert config_hash(SweepConfig()) != config_hash(replace(SweepConfig(), replicas=2))
    for bad, said in (("0", "between 1 and 1000"), ('"3"', 'must be a whole number; got the string "3"'),
                      ("true", "must be a whole number; got true")):
        path.write_text(f"replicas = {bad}\n")
        with pytest.raises(ShiftbenchInputError, match=said):
            load_config_file(path)


def test_a_request_without_a_seed_hashes_as_before_seeds_existed() -> None:
    request = ModelRequest(system="s", messages=(Message("user", "Refund order 7."),), purpose="agent",
                           cache_scope="x")
    # The request type as it was before seeds: the same fields, in order, without `seed`.
    kept = [(f.name, f.type) for f in fields(ModelRequest) if f.name != "seed"]
    old_type = make_dataclass("ModelRequest", kept, frozen=True)
    old = old_type(**{name: getattr(request, name) for name, _ in kept})
    before = hashlib.sha256(orjson.dumps({"run": "r", "unit": "u", "model": "m", "request": old},
                                         option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert request_hash("r", "u", "m", request) == before
    assert request_hash("r", "u", "m", replace(request, seed=0)) != before
    assert request_hash("r", "u", "m", replace(request, seed=0)) != request_hash("r", "u", "m",
                                                                                 replace(request, seed=1))


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


@pytest.mark.usefixtures("api_key")
async def test_each_replica_sends_its_own_seed_to_the_server(built_suite: Path, tmp_path: Path) -> None:
    async with serve_mock(tool_loop(calls_before_finish=1)) as mock:
        model = f"openai-compatible:mock@{mock.base_url}/v1"
        config = SweepConfig(models=(model,), methods=("blind",), scenarios=("banking_l1",), dataset=str(built_suite),
                             pilot=1, replicas=2, prices={model: PRICE})
        outcome = await start_sweep(config, tmp_path / "j.sqlite", "none", quiet)
        bodies = [r.body for r in mock.requests]
    assert outcome.status == "completed"
    probe, *calls = bodies
    assert "seed" not in probe  # the probe belongs to no replica
    assert {body["seed"] for body in calls} == {0, 1}
    # Replica 1's episodes ask what replica 0's ask, with another seed: none is answered from the other's cache.
    by_seed = {seed: sorted(orjson.dumps(b["messages"][1:2]) for b in calls if b["seed"] == seed) for seed in (0, 1)}
    assert by_seed[0] == by_seed[1] and len(by_seed[0]) > 0


def test_noisy_variant_names_its_probability() -> None:
    assert parse_variant("noisy=0.25") == ("noisy", 0.25)
    assert parse_variant("docs") == ("docs", 0.0)
    for bad in ("noisy", "noisy=2", "noisy=nan", "noisy=x", "docs=0.1", "psychic"):
        with pytest.raises(ValueError, match="scripted:"):
            parse_variant(bad)
    assert ScriptedModel("noisy=0.25").name == "scripted:noisy=0.25"


def test_noisy_coin_is_seeded_by_replica_and_task_at_its_probability() -> None:
    instructions = [f"Current timestamp: {i}\n\nRefund order {i}." for i in range(4000)]
    rate = sum(deviates(1, text, 0.2) for text in instructions) / len(instructions)
    assert 0.18 < rate < 0.22
    assert [deviates(1, t, 0.2) for t in instructions] == [deviates(1, t, 0.2) for t in instructions]
    assert [deviates(1, t, 0.2) for t in instructions] != [deviates(2, t, 0.2) for t in instructions]
    assert not any(deviates(1, t, 0.0) for t in instructions) and all(deviates(1, t, 1.0) for t in instructions)
    assert deviation_variance(1.0, 0.0, 0.2) == pytest.approx(0.16)
    assert deviation_variance(0.5, 0.5, 0.2) == 0.0

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.settings import SweepConfig, config_from_json, config_hash, load_config_file
from simulators.errors import ShiftbenchInputError


def test_typo_in_sweep_file_names_the_file_and_suggests(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('modles = ["scripted"]\n')
    with pytest.raises(ShiftbenchInputError, match=r"sweep.toml: unknown key 'modles' \(did you mean 'models'\?\)"):
        load_config_file(path)


def test_a_typo_in_an_endpoints_table_names_the_file_the_table_and_the_nearest_key(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('models = ["local"]\n[endpoints.local]\nkind = "openai-compatible"\nmodel = "m"\n'
                    'base_url = "http://127.0.0.1:1/v1"\nmax_concurency = 2\n')
    with pytest.raises(ShiftbenchInputError, match=r"sweep.toml \[endpoints.local\]: unknown key 'max_concurency' "
                                                   r"\(did you mean 'max_concurrency'\?\); known: api_key_env, "):
        load_config_file(path)


def test_unknown_method_and_scenario_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ShiftbenchInputError, match="unknown method 'blnd' \\(did you mean 'blind'\\?\\)"):
        SweepConfig(methods=("blnd",)).validate("flags")
    with pytest.raises(ShiftbenchInputError, match="unknown scenario 'retail_l9'"):
        SweepConfig(scenarios=("retail_l9",)).validate("flags")
    with pytest.raises(ShiftbenchInputError, match="block_size must be between 1 and 100000, got 0"):
        SweepConfig(block_size=0).validate("flags")


def test_file_values_relative_dataset_and_hash(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('[sweep]\nmethods = ["oracle"]\ndataset = "ds"\nblock_size = 12\nconcurrency = 4\n')
    config = load_config_file(path)
    assert config.methods == ("oracle",) and config.block_size == 12
    assert config.dataset == str((tmp_path / "ds").resolve())
    # Concurrency does not change results, so it does not change the hash; block size does.
    assert config_hash(config) == config_hash(SweepConfig(methods=("oracle",), dataset=config.dataset,
                                                          block_size=12))
    assert config_hash(config) != config_hash(SweepConfig(methods=("oracle",), dataset=config.dataset))


def test_stored_config_round_trips() -> None:
    from dataclasses import asdict

    import orjson

    config = SweepConfig(models=("scripted", "scripted:docs"), pilot=3)
    assert config_from_json(orjson.dumps(asdict(config)).decode()) == config


def test_wrong_type_is_named(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('block_size = "twelve"\n')
    with pytest.raises(ShiftbenchInputError, match="block_size must be a whole number; got the string \"twelve\""):
        load_config_file(path)


def test_a_price_takes_a_batch_tier_of_the_same_fields_and_refuses_a_malformed_one() -> None:
    from runner.config.prices import Price, parse_price_text

    head = '[prices."m"]\ninput = 1\ncached_input = 0.1\ncache_write = 1.25\noutput = 4\n'
    tier = '[prices."m".batch]\ninput = 0.5\ncached_input = 0.05\ncache_write = 0.625\noutput = 2\n'
    assert parse_price_text(head + tier, "p.toml")["m"] == Price(1, 0.1, 1.25, 4, batch=Price(0.5, 0.05, 0.625, 2))
    assert parse_price_text(head, "p.toml")["m"].batch is None
    for bad, says in ((head + "batch = 3\n", 'p.toml: [prices."m".batch]: must be a table'),
                      (head + '[prices."m".batch]\ninput = 0.5\n', 'p.toml: [prices."m".batch]: missing cached_input'),
                      (head + tier + '[prices."m".batch.batch]\ninput = 1\n',
                       "unknown key 'batch'; expected input, cached_input, cache_write, output "
                       "(and optionally cache_write_1h)")):
        with pytest.raises(ShiftbenchInputError) as refused:
            parse_price_text(bad, "p.toml")
        assert says in str(refused.value)

"""The batch settings enter where every other key does: checked, one line naming file and key, hashed."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.batch_settings import BatchSettings
from runner.config.settings import SweepConfig, config_from_json, config_hash, load_config_file
from simulators.errors import ShiftbenchInputError


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_sweep_file_sets_mode_and_table(tmp_path: Path) -> None:
    config = load_config_file(_file(tmp_path, '[sweep]\nbatch = "tests"\n[batch]\nmax_items = 5\nwait_s = 2\n'
                                               'on_item_failure = "live"\n'))
    assert config.batch == "tests"
    assert config.batching() == BatchSettings(max_items=5, wait_s=2.0, on_item_failure="live")


def test_flat_file_takes_the_table(tmp_path: Path) -> None:
    config = load_config_file(_file(tmp_path, 'models = ["scripted"]\n[batch]\npoll_s = 1\npoll_max_s = 4\n'))
    assert config.batch == "off" and config.batching().poll_max_s == 4.0


@pytest.mark.parametrize(("text", "message"), [
    ('[batch]\nmax_itemz = 5\n', "[batch]: unknown key 'max_itemz' (did you mean 'max_items'?)"),
    ('[batch]\nmax_items = 0\n', "[batch]: max_items must be a whole number from 1 to 100000, got 0"),
    ('[batch]\nwait_s = "soon"\n', "[batch]: wait_s must be a number of seconds"),
    ('[batch]\nstart = "now"\n', "[batch]: start must be one of 'window', 'after_serving', got 'now'"),
    ('[batch]\npoll_s = 10\npoll_max_s = 2\n', "poll_max_s (2) is below poll_s (10)"),
    ('batch = "yes"\n', "batch must be one of 'tests', 'off', got 'yes'"),
    ('[endpoints.e]\nkind = "openai"\nmodel = "m"\nbatch = true\n',
     "[endpoints.e]: batch must be one of 'tests', 'off', got True"),
])
def test_bad_settings_are_one_line_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(ShiftbenchInputError) as caught:
        load_config_file(path)
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_hash_covers_batch_only_when_set() -> None:
    plain = SweepConfig()
    batched = SweepConfig(batch="tests")
    tuned = SweepConfig(batch="tests", batch_settings={"max_items": 7})
    assert len({config_hash(plain), config_hash(batched), config_hash(tuned)}) == 3
    assert "batch" not in plain.results_view()  # a run journaled before batching resumes unchanged
    from dataclasses import asdict

    import orjson

    stored = config_from_json(orjson.dumps(asdict(tuned)).decode())
    assert stored.batch == "tests" and stored.batching().max_items == 7 and config_hash(stored) == config_hash(tuned)


def test_the_cli_refuses_a_model_that_cannot_batch_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    journal = tmp_path / "j.sqlite"
    done = subprocess.run([sys.executable, "-m", "runner.cli", "run", "--batch", "tests", "--display", "none",
                           "--journal", str(journal)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "shiftbench: error: --batch tests: 'scripted' runs in-process and has no batch API; run it with --batch off"]
    assert not journal.exists()

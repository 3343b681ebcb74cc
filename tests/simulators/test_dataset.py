"""Loading, validating, writing and fingerprinting dataset directories."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from runner.cli import main
from simulators.dataset import fingerprint, load_dataset, task_row, write_dataset
from simulators.errors import DatasetError
from tests.fakes import toy_scenario


def write_toy(root: Path) -> str:
    scenario = toy_scenario(name="retail_l1")
    return write_dataset(root, [scenario])


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    print_ = write_toy(tmp_path / "ds")
    dataset = load_dataset(tmp_path / "ds")
    original = toy_scenario(name="retail_l1")
    loaded = dataset.scenarios["retail_l1"]
    assert [task_row(t) for t in loaded.serving] == [task_row(t) for t in original.serving]
    assert [task_row(t) for t in loaded.test] == [task_row(t) for t in original.test]
    assert loaded.environment.windows == original.environment.windows
    assert dataset.fingerprint == print_ == fingerprint(tmp_path / "ds")
    assert set(dataset.file_hashes) >= {"data/retail_l1/serving.jsonl", "environments/retail_l1/tools.json"}


def test_fingerprint_changes_with_any_byte(tmp_path: Path) -> None:
    before = write_toy(tmp_path / "ds")
    prompt = tmp_path / "ds/environments/retail_l1/system_prompt.txt"
    prompt.write_text(prompt.read_text() + " ")
    assert fingerprint(tmp_path / "ds") != before


def corrupt_line(root: Path, line: int, text: bytes) -> None:
    path = root / "data/retail_l1/serving.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[line - 1] = text
    path.write_bytes(b"".join(lines))


def test_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    write_toy(tmp_path / "ds")
    corrupt_line(tmp_path / "ds", 3, b'{"task_id": "x",\n')
    with pytest.raises(DatasetError) as caught:
        load_dataset(tmp_path / "ds")
    assert str(caught.value).startswith(f"{tmp_path / 'ds/data/retail_l1/serving.jsonl'}:3: not valid JSON")


def test_task_naming_an_unknown_tool(tmp_path: Path) -> None:
    write_toy(tmp_path / "ds")
    path = tmp_path / "ds/data/retail_l1/serving.jsonl"
    row = orjson.loads(path.read_bytes().splitlines()[1])
    row["evaluator"]["actions"][0]["name"] = "launch_rocket"
    corrupt_line(tmp_path / "ds", 2, orjson.dumps(row) + b"\n")
    with pytest.raises(DatasetError, match=r"serving.jsonl:2: evaluator action names unknown tool 'launch_rocket'"):
        load_dataset(tmp_path / "ds")


def test_missing_environment_file_and_bad_schema(tmp_path: Path) -> None:
    write_toy(tmp_path / "ds")
    (tmp_path / "ds/environments/retail_l1/workflow.md").unlink(missing_ok=True)
    (tmp_path / "ds/environments/retail_l1/policy.md").unlink()
    with pytest.raises(DatasetError, match=r"retail_l1/policy.md: missing file"):
        load_dataset(tmp_path / "ds")
    write_toy(tmp_path / "ds2")
    tools = tmp_path / "ds2/environments/retail_l1/tools.json"
    data = orjson.loads(tools.read_bytes())
    data[1]["function"]["parameters"] = {"type": "object", "properties": {"case_id": "string"}}
    tools.write_bytes(orjson.dumps(data))
    with pytest.raises(DatasetError, match=r"tools.json: tool 'decide': parameters.properties.case_id must be"):
        load_dataset(tmp_path / "ds2")
    tools.write_text("[{")
    with pytest.raises(DatasetError, match=r"tools.json: is not valid JSON"):
        load_dataset(tmp_path / "ds2")


def test_data_check_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_toy(tmp_path / "ds")
    corrupt_line(tmp_path / "ds", 1, b"nope\n")
    before = sorted(p.name for p in (tmp_path / "ds").rglob("*"))
    assert main(["data", "check", str(tmp_path / "ds")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "serving.jsonl:1: not valid JSON" in err[0]
    assert sorted(p.name for p in (tmp_path / "ds").rglob("*")) == before


def test_failed_write_leaves_the_previous_dataset_untouched(tmp_path: Path) -> None:
    write_toy(tmp_path / "ds")
    before = fingerprint(tmp_path / "ds")

    def scenarios():  # type: ignore[no-untyped-def]
        yield toy_scenario(name="retail_l1")
        raise RuntimeError("generator crashed")

    with pytest.raises(RuntimeError):
        write_dataset(tmp_path / "ds", scenarios())
    assert fingerprint(tmp_path / "ds") == before
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]

"""`shiftbench data replay` and `data check --gold` on the official-schema fixtures and the built-in suite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from runner.cli import main
from simulators.dataset import load_dataset
from simulators.integrity import dangling_ids, gold_problems

OFFICIAL = Path(__file__).resolve().parents[1] / "fixtures" / "official"


def first_task(scenario: str) -> str:
    line = (OFFICIAL / "data" / scenario / "serving.jsonl").read_text().splitlines()[0]
    task_id: str = json.loads(line)["task_id"]
    return task_id


@pytest.mark.parametrize("scenario", ["banking_l2", "retail_l1", "pitch_l1"])
def test_replay_gold_prints_each_observation_the_hash_and_reward_one(
        scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "replay", str(OFFICIAL), "--scenario", scenario, "--task", first_task(scenario),
                 "--gold"]) == 0
    out = capsys.readouterr().out
    assert "-> {\"accepted\": true}" in out and "state hash " in out and "reward 1.00" in out


def test_replay_actions_from_a_file_explain_a_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    actions = tmp_path / "calls.json"
    actions.write_text(json.dumps([{"name": "approve_case", "arguments": {"case_id": "TXN-455102"}},
                                   {"name": "deny_case", "arguments": {"case_id": "TXN-455102", "reason": "x"}},
                                   {"name": "finish", "arguments": {}}]))
    assert main(["data", "replay", str(OFFICIAL), "--scenario", "banking_l2", "--task", "bank2_3c91a07e52",
                 "--actions", str(actions), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [s["observation"] for s in result["steps"]] == [
        "Case TXN-455102 approved", "Error: invalid reason code", '{"accepted": true}']
    assert result["grade"]["reward"] == 0.0 and result["grade"]["details"]["state_match"] is False
    assert result["grade"]["judge"] == "replay" and len(result["state_hash"]) == 64


def test_replay_refuses_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "calls.json"
    bad.write_text('{"name": "finish"}')
    assert main(["data", "replay", str(OFFICIAL), "--scenario", "banking_l2", "--task", "bank2_3c91a07e52",
                 "--actions", str(bad)]) == 2
    assert main(["data", "replay", str(OFFICIAL), "--scenario", "banking_l2", "--task", "nope", "--gold"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and "calls.json" in errors[0] and "no task 'nope'" in errors[1]


def test_check_gold_passes_on_the_official_fixtures(capsys: pytest.CaptureFixture[str]) -> None:
    tasks = sum(len(path.read_text().splitlines()) for path in (OFFICIAL / "data").rglob("*.jsonl"))
    assert main(["data", "check", str(OFFICIAL), "--gold"]) == 0
    assert f"checked {tasks} tasks: all gold scores 1.0" in capsys.readouterr().out


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "official"
    shutil.copytree(OFFICIAL, root)
    return root


def test_check_gold_lists_a_task_whose_gold_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(tmp_path)
    path = root / "data" / "banking_l2" / "serving.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["evaluator"]["actions"][0]["kwargs"]["reason"] = "verification_required"  # not an L2 code
    lines[0] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    assert main(["data", "check", str(root), "--gold"]) == 1
    out = capsys.readouterr().out
    assert "banking_l2 bank2_3c91a07e52: gold refused: escalate_case: Error: invalid reason code" in out
    assert "1 problem(s)" in out


def test_check_gold_notices_ids_that_point_at_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(tmp_path)
    retail_world = root / "environments" / "retail_l1" / "world.json"
    world = json.loads(retail_world.read_text())
    world["_episode_view"]["base_orders"].append("#W9999999")
    retail_world.write_text(json.dumps(world))
    banking_world = root / "environments" / "banking_l2" / "world.json"
    world = json.loads(banking_world.read_text())
    del world["payees"]["PAY-519"]
    banking_world.write_text(json.dumps(world))
    assert main(["data", "check", str(root), "--gold"]) == 1
    out = capsys.readouterr().out
    assert "retail_l1 (world): _episode_view lists order #W9999999, which is not in the world" in out
    assert "case TRF-561734 refers to payees PAY-519, which is not in the world" in out
    assert main(["data", "check", str(root)]) == 1  # the plain check notices them too
    assert "_episode_view lists order #W9999999" in capsys.readouterr().out


@pytest.mark.parametrize("scenario", ["banking_l3", "retail_l2", "pitch_l1"])
async def test_gold_scores_one_on_the_built_in_suite(built_suite: Path, scenario: str) -> None:
    loaded = load_dataset(built_suite, only=[scenario]).scenarios[scenario]
    assert dangling_ids(loaded) == []
    assert await gold_problems(loaded) == []


def test_replay_json_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "replay", str(OFFICIAL), "--scenario", "pitch_l1", "--task", first_task("pitch_l1"),
                 "--gold", "--json"]) == 0
    result = orjson.loads(capsys.readouterr().out)
    assert result["finished"] is True and result["grade"]["reward"] == 1.0
    assert result["steps"][-1]["name"] == "finish" and result["grade"]["judge"]

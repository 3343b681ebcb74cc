"""`--replicas K` end to end with the offline `scripted:noisy` agent, in real subprocesses: replicas differ
from one another, a SIGKILL mid-run resumes to identical rewards per replica, and `verify` re-grades every
replica."""

from __future__ import annotations

import csv
import io
import sqlite3
import subprocess
from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from runner.cli import main
from tests.runner.test_kill_resume import assert_complete, kill_after, only_run, shiftbench

REPLICAS = 3


def sweep_file(folder: Path, suite: Path) -> Path:
    path = folder / "sweep.toml"
    path.write_text(f'models = ["scripted:noisy=0.3"]\nmethods = ["blind", "tabular"]\n'
                    f'scenarios = ["banking_l1", "retail_l1"]\ndataset = "{suite}"\npilot = 3\n'
                    f"replicas = {REPLICAS}\nblock_size = 2\n")
    return path


def rewards_by_replica(journal: Path) -> dict[int, dict[str, float]]:
    """Replica -> (unit id without its replica part) -> reward. Test-only raw SQL."""
    found: dict[int, dict[str, float]] = defaultdict(dict)
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT u.replica, u.unit_id, e.reward FROM units u JOIN episodes e "
                          "ON e.run_id = u.run_id AND e.unit_id = u.unit_id").fetchall()
    for replica, unit, reward in rows:
        found[int(replica)][str(unit).replace(f"|replica{replica}|", "|")] = float(reward)
    return dict(found)


@pytest.mark.slow
def test_killed_replicated_run_resumes_to_identical_rewards_per_replica(built_suite: Path, tmp_path: Path) -> None:
    config = sweep_file(tmp_path, built_suite)
    reference = tmp_path / "reference.sqlite"
    subprocess.run(shiftbench("run", "--config", str(config), "--journal", str(reference), "--display", "none"),
                   check=True, capture_output=True)
    expected = rewards_by_replica(reference)
    assert sorted(expected) == list(range(REPLICAS))
    assert len({len(units) for units in expected.values()}) == 1  # every replica ran every unit
    assert expected[0] != expected[1] != expected[2]  # each replica drew its own deviations

    journal = tmp_path / "killed.sqlite"
    total = sum(len(units) for units in expected.values())
    assert kill_after(shiftbench("run", "--config", str(config), "--journal", str(journal), "--display", "none"),
                      journal, total // 3), "the run ended before a third of its episodes were committed"
    run_id = only_run(journal)[0]
    subprocess.run(shiftbench("resume", run_id, "--journal", str(journal), "--display", "none"), check=True,
                   capture_output=True)
    with sqlite3.connect(reference) as db:
        all_rewards = {unit.split("|", 1)[1]: reward for unit, reward in db.execute("SELECT unit_id, reward FROM "
                                                                                     "episodes")}
    assert_complete(journal, all_rewards)
    assert rewards_by_replica(journal) == expected

    verified = subprocess.run(shiftbench("verify", run_id, "--journal", str(journal)), capture_output=True,
                              text=True, check=True)
    per_replica = total // REPLICAS
    assert verified.stdout.strip() == (f"verify {run_id}: all {total} stored rewards re-grade equal ("
                                       + ", ".join(f"replica {k}: {per_replica}" for k in range(REPLICAS)) + ")")


def test_reports_carry_the_noise_floor_in_every_format(built_suite: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--models", "scripted:noisy=0.3", "--methods", "blind,tabular",
                 "--scenarios", "retail_l1", "--pilot", "2", "--replicas", "3", "--journal", str(journal),
                 "--display", "none"]) == 0
    capsys.readouterr()
    run_id = only_run(journal)[0]
    assert main(["report", run_id, "--journal", str(journal)]) == 0
    text = capsys.readouterr().out
    assert "Noise across replicas" in text and "Least stable tasks" in text
    assert "streams with replicas: replica, then family within setting" in text
    assert main(["report", run_id, "--json", "--journal", str(journal)]) == 0
    report = orjson.loads(capsys.readouterr().out)
    noise = report["streams"][0]["noise"]
    assert noise["replicas"] == 3 and len(noise["avg_h"]["by_replica"]) == 3 and noise["mde_avg_h"] is not None
    assert 0.0 <= noise["flip_rate"] <= 1.0 and report["streams"][0]["noise_note"] == ""
    assert main(["report", run_id, "--csv", "--journal", str(journal)]) == 0
    row = next(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert row["replicas"] == "3" and row["mde_avg_h"] != ""
    assert main(["report", run_id, "--md", "--journal", str(journal)]) == 0
    assert "## Noise across replicas" in capsys.readouterr().out
    page = tmp_path / "report.html"
    assert main(["report", run_id, "--html", str(page), "--journal", str(journal)]) == 0
    assert "Noise across replicas" in page.read_text() and "range of its replicas" in page.read_text()
    capsys.readouterr()
    a, b = f"{run_id}:scripted:noisy=0.3/tabular", f"{run_id}:scripted:noisy=0.3/blind"
    assert main(["compare", a, b, "--journal", str(journal)]) == 0
    assert "3 replicas paired by index" in capsys.readouterr().out
    assert main(["compare", a, b, "--json", "--journal", str(journal)]) == 0
    assert orjson.loads(capsys.readouterr().out)["replicas"]["replicas"] == 3
    assert main(["power", run_id, "--stream", "scripted:noisy=0.3/blind", "--mde", "5", "--json",
                 "--journal", str(journal)]) == 0
    sized = orjson.loads(capsys.readouterr().out)
    assert sized["rows"][0]["per_window"] == 2 and sized["rows"][-1]["per_window"] == 0
    assert all(row["replicas"] is None or row["achieved_mde"] <= 5 for row in sized["rows"])
    rules = tmp_path / "rules.toml"
    for bar, code in ((1000, 0), (0.001, 3)):
        rules.write_text(f'[[rule]]\nmetric = "mde.avg_h"\nstream = "scripted:noisy=0.3/blind"\nmax = {bar}\n')
        assert main(["gate", run_id, "--rules", str(rules), "--journal", str(journal)]) == code
    assert "more replicas would settle it" in capsys.readouterr().out
    # show and export treat replicas as streams of their own: one replica at a time, each episode once.
    assert main(["show", run_id, "--replica", "2", "--limit", "0", "--json", "--journal", str(journal)]) == 0
    shown = orjson.loads(capsys.readouterr().out)
    assert shown and all("|replica2|" in episode["unit_id"] for episode in shown)
    assert main(["show", run_id, "--replica", "3", "--journal", str(journal)]) == 2
    assert "--replica 3: run " in capsys.readouterr().err  # not "no episode matches" with exit 0
    # state names each replica's state: three streams of one cell, three learned states.
    stream = "scripted:noisy=0.3/tabular"
    assert main(["state", run_id, "--stream", stream, "--json", "--journal", str(journal)]) == 0
    assert sorted(orjson.loads(capsys.readouterr().out)) == [f"{stream} replica {k}" for k in range(3)]
    assert main(["state", run_id, "--stream", stream, "--journal", str(journal)]) == 0
    text = capsys.readouterr().out
    assert all(f"{stream} replica {k} on retail_l1, state as of latest" in text for k in range(3))
    assert main(["export", run_id, "--format", "jsonl", "--out", str(tmp_path / "out"), "--journal",
                 str(journal)]) == 0
    exported = (tmp_path / "out" / f"{run_id}.jsonl").read_text().splitlines()
    with sqlite3.connect(journal) as db:
        assert len(exported) == db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    assert len({orjson.loads(line)["unit_id"] for line in exported}) == len(exported)


def test_one_replica_says_the_noise_across_serving_streams_is_not_measured(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--methods", "blind,oracle", "--scenarios", "banking_l1",
                 "--pilot", "1", "--journal", str(journal), "--display", "none"]) == 0
    capsys.readouterr()
    run_id = only_run(journal)[0]
    assert main(["report", run_id, "--journal", str(journal)]) == 0
    assert "noise across serving streams: not measured: one replica per stream" in capsys.readouterr().out
    assert main(["compare", f"{run_id}:scripted/oracle", f"{run_id}:scripted/blind", "--journal", str(journal)]) == 0
    assert "the noise across serving streams is not measured" in capsys.readouterr().out

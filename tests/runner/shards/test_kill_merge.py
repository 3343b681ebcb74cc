"""Four shards of a learning sweep as four processes, one frozen mid-work (merge refuses it as still
being written), then SIGKILLed (merge refuses it as unfinished) and started again with the same
command; the merge then reads exactly as a one-process run of the same sweep: per-task rewards,
Avg H / Avg F, intervals, the sealed scores, and `verify`, `export` and `compare` on it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.runner.shards.processes import (
    cli,
    committed,
    finish,
    freeze_after,
    kill,
    only_run,
    report_json,
    shiftbench,
    start,
    task_rewards,
)

COUNT = 4
VICTIM = 0
"""The busiest shard (the split gives the largest cells to the lowest indices first)."""


def sweep_flags(suite: Path) -> list[str]:
    return ["--dataset", str(suite), "--models", "scripted", "--methods", "tabular,rag",
            "--scenarios", "retail_l1,banking_l1,pitch_l1", "--pilot", "6", "--display", "none"]


def scores(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: s[k] for k in ("model", "method", "avg_h", "avg_h_ci", "avg_f", "avg_f_ci", "settings")}
            for s in report["streams"]]


@pytest.mark.slow
@pytest.mark.heavy
def test_four_shard_processes_one_killed_merge_to_the_one_process_run(built_suite: Path, tmp_path: Path) -> None:
    journals = tmp_path / "journals"
    journals.mkdir()
    started = time.monotonic()

    def shard_cmd(index: int) -> list[str]:
        return shiftbench("run", *sweep_flags(built_suite), "--shard", f"{index}/{COUNT}",
                          "--journal", str(journals / "shard-{shard}.sqlite"))

    processes = [start(shard_cmd(i), tmp_path / f"shard-{i}.log") for i in range(COUNT)]
    victim = journals / f"shard-{VICTIM}.sqlite"
    assert freeze_after(processes[VICTIM], victim, 10), "the busiest shard finished before 10 episodes"
    at_kill = committed(victim)
    out = tmp_path / "merged.sqlite"
    being_written = cli("journal", "merge", str(out), *(str(journals / f"shard-{i}.sqlite") for i in range(COUNT)))
    kill(processes[VICTIM])
    assert finish(processes[1:]) == [0] * (COUNT - 1)
    unfinished = cli("journal", "merge", str(out), *(str(journals / f"shard-{i}.sqlite") for i in range(COUNT)))
    for refused, says in ((being_written, "still being written"), (unfinished, "has not finished")):
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
        assert refused.stderr.count("\n") == 1 and not out.exists()

    rerun = cli(*shard_cmd(VICTIM)[3:])
    assert rerun.returncode == 0, rerun.stderr
    assert "continues run" in rerun.stdout
    shard_wall = time.monotonic() - started
    merged = cli("journal", "merge", str(out), *(str(p) for p in sorted(journals.glob("shard-*.sqlite"))))
    assert merged.returncode == 0, merged.stderr
    sweep = only_run(out)

    started = time.monotonic()
    one = tmp_path / "one.sqlite"
    assert cli("run", *sweep_flags(built_suite), "--journal", str(one)).returncode == 0
    one_wall = time.monotonic() - started
    run_id = only_run(one)
    rewards = task_rewards(out, sweep)
    assert rewards == task_rewards(one, run_id)
    merged_report, one_report = report_json(out, sweep), report_json(one, run_id)
    assert scores(merged_report) == scores(one_report)
    assert merged_report["scores_seal"] == one_report["scores_seal"]
    print(f"\nshards: victim frozen at {at_kill} episodes; 4 shards (one rerun) {shard_wall:.1f} s, one process "
          f"{one_wall:.1f} s; {len(rewards)} test rewards equal; scores sealed "
          f"{merged_report['scores_seal']['sha256'][:16]} both; "  # type: ignore[index]
          + "; ".join(f"{s['method']} H {s['avg_h']:.2f} {s['avg_h_ci']} F {s['avg_f']:.2f} {s['avg_f_ci']}"
                      for s in merged_report["streams"]))  # type: ignore[attr-defined]

    verified = cli("verify", sweep, "--journal", str(out))
    assert verified.returncode == 0 and "re-grade equal" in verified.stdout, verified.stdout
    for journal, run in ((out, sweep), (one, run_id)):
        assert cli("export", run, "--out", str(tmp_path / f"export-{run}"), "--journal", str(journal)).returncode == 0
    exported = [[_episode(line) for line in (tmp_path / f"export-{run}" / f"{run}.jsonl").read_bytes().splitlines()]
                for run in (sweep, run_id)]
    assert exported[0] == exported[1] and len(exported[0]) == committed(one)
    compared = [cli("compare", f"{run}:scripted/tabular", f"{run}:scripted/rag", "--json", "--journal", str(j))
                for j, run in ((out, sweep), (one, run_id))]
    assert compared[0].returncode == compared[1].returncode
    assert _without_runs(compared[0].stdout, sweep) == _without_runs(compared[1].stdout, run_id)
    html = tmp_path / "merged.html"
    assert cli("report", sweep, "--html", str(html), "--journal", str(out)).returncode == 0
    assert "merged 4 of 4 shards" in html.read_text()


def _episode(line: bytes) -> dict[str, Any]:
    """An exported episode without what a second run of it changes: its run id, wall-clock latency."""
    episode: dict[str, Any] = orjson.loads(line)
    return {k: v for k, v in episode.items() if k not in ("run_id", "latency_s", "finished_at")}


def _without_runs(text: str, run_id: str) -> str:
    return text.replace(run_id, "RUN")

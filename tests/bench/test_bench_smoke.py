"""The benchmark scripts run end to end (tiny sizes) and record what a result needs. No timing is
asserted: speed is shown by `python -m bench.run_benchmarks`, never by a test."""

from __future__ import annotations

from pathlib import Path

import orjson

from bench.run_benchmarks import BENCHMARKS, main


def test_smoke_run_writes_every_benchmark_with_its_machine(built_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "smoke.json"
    assert main(["--smoke", "--suite", str(built_suite), "--out", str(out)]) == 0
    result = orjson.loads(out.read_bytes())
    assert result["mode"] == "smoke"
    assert result["machine"]["cores_usable"] >= 1 and result["machine"]["python"]
    assert result["git"]["commit"]
    assert set(result["benchmarks"]) == set(BENCHMARKS)
    for name, section in result["benchmarks"].items():
        assert section["rows"], name
    offline = {row["case"]: row for row in result["benchmarks"]["offline"]["rows"]}
    assert offline["icl_full"]["serving"] > 0 and offline["icl_full"]["checkpoints"] > 0
    makespan = result["benchmarks"]["makespan"]["rows"]
    assert all(row["calls"] == 3 * row["episodes"] for row in makespan)  # tool_loop: 3 turns an episode

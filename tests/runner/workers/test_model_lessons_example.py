"""docs/methods.md's end-to-end example: `examples/model_lessons.py` in a worker, its model calls through
the runner to the project's mock provider (a real loopback server in its own process), journaled as
the method's; the report's method table counts exactly the journaled calls and tokens, and the state
holds what the model answered."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import orjson

from bench.mock_server import mock_process
from runner.report.build import build_report
from tests.runner.test_kill_resume import only_run, shiftbench

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "model_lessons.py"


async def test_the_model_lessons_example_runs_against_the_mock_and_the_report_counts_its_calls(
        built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "lessons.sqlite"
    async with mock_process(0.0, 3) as url:
        done = await anyio.run_process(
            shiftbench("run", "--models", f"openai-compatible:mock@{url}/v1", "--allow-unpriced", "--methods",
                       f"{EXAMPLE}:LESSONS", "--scenarios", "retail_l1", "--pilot", "2", "--dataset",
                       str(built_suite), "--journal", str(journal), "--display", "none"), check=False)
    assert done.returncode == 0, (done.stdout + done.stderr).decode()
    with sqlite3.connect(journal) as db:
        stream, calls, tokens_in, tokens_out = db.execute(
            "SELECT stream_id, count(*), sum(input_tokens), sum(output_tokens) FROM model_calls "
            "WHERE purpose = 'method' GROUP BY stream_id").fetchone()
        served = db.execute("SELECT count(*) FROM episodes WHERE unit_id LIKE '%|serving|%'").fetchone()[0]
        (state,) = db.execute("SELECT state FROM checkpoints WHERE label = 'latest'").fetchone()
    assert calls == served > 0  # one lesson asked per serving episode
    (row,) = (await build_report(journal, only_run(journal)[0])).method_streams
    assert (row.stream_id, row.method_calls, row.method_input_tokens, row.method_output_tokens) == (
        stream, calls, tokens_in, tokens_out)
    assert row.boundary.startswith(("landlock", "process only")), row.boundary
    assert orjson.loads(state)["lessons"] == ["ok"] * min(5, served)

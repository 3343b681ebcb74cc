"""`run --batch tests` on a user's own model priced in the sweep file without a batch tier: refused in
one line saying which TOML table gives the batch price and where the providers publish it, and run with
its batched calls unpriced under --allow-unpriced, as a live run's unpriced model is (issue 39, item 5)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

from bench.mock_batch_state import BatchSettings
from bench.mock_provider import serve_mock

KEY = "sk-loopback-test-key-0123456789"
LIVE = "input = 2.0\ncached_input = 0.5\ncache_write = 2.5\noutput = 8.0\n"


def sweep_file(folder: Path, base_url: str) -> tuple[Path, str]:
    model = f"openai-compatible:mock@{base_url}/v1"
    path = folder / "sweep.toml"
    path.write_text(f'[sweep]\nmodels = ["{model}"]\nbatch = "tests"\n\n'
                    "[batch]\nwait_s = 0.05\npoll_s = 0.05\npoll_max_s = 0.2\n\n"
                    f'[prices."{model}"]\n{LIVE}', encoding="utf-8")
    return path, model


def shiftbench(suite: Path, config: Path, journal: Path, *more: str) -> subprocess.CompletedProcess[str]:
    env = {"OPENAI_COMPATIBLE_API_KEY": KEY, "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "runner.cli", "run", "--config", str(config), "--dataset",
                           str(suite), "--scenarios", "banking_l1", "--methods", "blind", "--pilot", "2",
                           "--display", "none", "--journal", str(journal), *more],
                          capture_output=True, text=True, timeout=300, env=env)


def test_a_model_priced_without_a_batch_tier_is_refused_saying_how_to_give_it(built_suite: Path,
                                                                              tmp_path: Path) -> None:
    config, model = sweep_file(tmp_path, "http://127.0.0.1:9")  # refused before anything is sent
    journal = tmp_path / "j.sqlite"
    done = shiftbench(built_suite, config, journal)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert f"no batch price known for '{model}'" in line
    assert f'[prices."{model}".batch] table' in line and "input, cached_input, cache_write, output" in line
    assert "pricing page" in line and "--allow-unpriced" in line
    assert not journal.exists()


async def test_allow_unpriced_runs_the_batched_calls_unpriced(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    async with serve_mock() as mock:
        mock.batches.settings = BatchSettings(latency_s=0.05)
        config, _ = sweep_file(tmp_path, mock.base_url)
        done = await asyncio.to_thread(shiftbench, built_suite, config, journal, "--allow-unpriced")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(journal) as db:
        by_route = dict(db.execute("SELECT route, count(*) FROM model_calls GROUP BY route").fetchall())
        batch_cost = db.execute("SELECT sum(cost_usd) FROM model_calls WHERE route = 'batch'").fetchone()[0]
        live_cost = db.execute("SELECT sum(cost_usd) FROM model_calls WHERE route = 'live'").fetchone()[0]
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    assert by_route.get("batch", 0) > 0 and batch_cost == 0  # the batched calls ran, unpriced
    assert live_cost > 0  # the live calls (the probe) keep their live price
    report = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "runner.cli", "report", run_id, "--journal", str(journal)],
        capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"})
    assert report.returncode == 0, report.stderr
    assert "no live or no batch price for" in report.stdout  # no saving claimed for calls that cost nothing

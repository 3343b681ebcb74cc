"""A pilot whose run ended before some method finished an episode (a budget stop can do that) projects
the methods it measured and names the others, instead of refusing the whole table after the run."""

from __future__ import annotations

from pathlib import Path

import anyio

from runner.cli import main
from runner.config.plan import plan_streams
from runner.config.settings import SweepConfig
from runner.cost.pilot import pilot_projection
from runner.journal import open_journal
from simulators.dataset import load_dataset


def test_a_method_without_a_finished_episode_is_named_not_projected(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "pitch_l1", "--methods", "blind", "--pilot",
                 "1", "--display", "none", "--journal", str(journal)]) == 0
    config = SweepConfig(methods=("blind", "oracle"), scenarios=("pitch_l1",), dataset=str(built_suite), pilot=1)
    scenario = load_dataset(str(built_suite), only=["pitch_l1"]).scenarios["pitch_l1"]
    streams = plan_streams(["scripted"], ["blind", "oracle"], [scenario], learns=config.learns())

    async def project() -> str:
        async with open_journal(journal, create=False) as opened:
            run_id = (await opened.read.runs())[0].run_id
            return await pilot_projection(opened, run_id, streams, config, None)

    text = anyio.run(project)
    assert "leaving out oracle (no finished episode)" in text
    assert "scripted  blind" in text and "scripted  oracle" not in text

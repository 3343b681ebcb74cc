"""A fault audit of a paid run against the loopback provider: the prefix before the faulted call is
answered from the run's paid answers (the provider never sees it again), only the turns after the
fault are sent and priced, and an interrupted audit resumes without sending a finished case again."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import anyio
import pytest

from bench.mock_provider import Recorded, Reply, Response, serve_mock, tool_loop
from runner.audits.faults import FAULTS, FaultSpec, run_fault_audit
from runner.config.settings import SweepConfig
from runner.journal import read_only
from runner.schedule.sweep import start_sweep
from tests.support import quiet

PRICE = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
TOOL = "get_case_details"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-loopback-audit")



class Gate:
    """tool_loop's answers; after `hold_after` audit requests it parks every further one (an audit cut
    short mid-way, deterministically: no clock)."""

    def __init__(self) -> None:
        self.inner = tool_loop(calls_before_finish=2, tool=TOOL)
        self.hold_after: int | None = None
        self.seen = 0
        self.parked = anyio.Event()

    def __call__(self, request: Recorded) -> Response:
        self.seen += 1
        answer = self.inner(request)
        if self.hold_after is not None and self.seen > self.hold_after:
            self.parked.set()
            assert isinstance(answer, Reply)
            return dataclasses.replace(answer, delay_s=3600.0)  # cancelled long before it answers
        return answer


async def test_fault_replays_pay_only_after_the_fault_and_resume(built_suite: Path, tmp_path: Path) -> None:
    gate = Gate()
    journal = tmp_path / "j.sqlite"
    async with serve_mock(gate) as mock:
        model = f"openai-compatible:mock@{mock.base_url}/v1"
        config = SweepConfig(models=(model,), methods=("blind",), scenarios=("banking_l1",),
                             dataset=str(built_suite), pilot=1, prices={model: PRICE})
        outcome = await start_sweep(config, journal, "none", quiet)
        assert outcome.status == "completed"
        async with read_only(journal) as reader:
            episodes = await reader.episode_count(outcome.run_id)

        # Interrupted: the provider answers every case's second turn and one finish, then parks the
        # rest; once that one case is journaled, the audit is cancelled.
        before = len(mock.requests)
        gate.seen, gate.hold_after = 0, episodes + 1
        spec = FaultSpec(TOOL, "error")
        async with anyio.create_task_group() as group:
            group.start_soon(run_fault_audit, journal, outcome.run_id, spec)
            await gate.parked.wait()
            await until_journaled(journal, 1)
            group.cancel_scope.cancel()
        first_leg = mock.requests[before:]
        gate.hold_after = None

        before = len(mock.requests)
        report = await run_fault_audit(journal, outcome.run_id, spec)
        resumed = mock.requests[before:]

    assert report.status == "completed"
    assert report.verdicts["not_applicable"] == 0 and report.verdicts["missing"] == 0
    assert sum(report.verdicts.values()) == episodes
    sent = first_leg + resumed
    # Every request an audit sent carries the fault: the recorded prefix (the first turn) never reached
    # the provider again, and the control replays were answered entirely from the run's paid answers.
    assert sent and all(faulted(r) for r in sent)
    # Two turns follow the fault in each episode (the second call, then finish); the resumed audit
    # never sends the journaled case's again.
    assert await journaled_cases(journal) == episodes
    assert len(resumed) <= 2 * (episodes - 1)
    async with read_only(journal) as reader:
        spent = await reader.spend(report.audit_id)
        run_spend = await reader.spend(outcome.run_id)
    assert spent.total > 0  # the audit's new calls are priced under its own id ...
    assert run_spend.total == pytest.approx(await _run_spend_before(journal, outcome.run_id))


async def until_journaled(journal: Path, cases: int) -> None:
    """Wait on the journal's progress (a generous safety net, no race: the case is not blocked)."""
    for _ in range(2400):
        if await journaled_cases(journal) >= cases:
            return
        await anyio.sleep(0.05)
    raise AssertionError("the audit journaled no case in 120 s")


async def journaled_cases(journal: Path) -> int:
    async with read_only(journal) as reader:
        row = await reader.fetchone("SELECT count(*) FROM audit_cases")
    return int(row[0]) if row else 0


def faulted(request: Recorded) -> bool:
    return any(m.get("role") == "tool" and m.get("content") == FAULTS["error"] for m in request.body["messages"])


async def _run_spend_before(journal: Path, run_id: str) -> float:
    async with read_only(journal) as reader:
        rows = await reader.fetchall("SELECT sum(cost_usd) FROM model_calls WHERE run_id = ? AND from_cache = 0",
                                     (run_id,))
    return float(rows[0][0] or 0.0)


async def test_a_killed_fault_audit_resumes_where_its_journal_stopped(built_suite: Path, tmp_path: Path) -> None:
    gate = Gate()
    journal = tmp_path / "j.sqlite"
    async with serve_mock(gate) as mock:
        model = f"openai-compatible:mock@{mock.base_url}/v1"
        config = SweepConfig(models=(model,), methods=("blind",), scenarios=("banking_l1",),
                             dataset=str(built_suite), pilot=1, prices={model: PRICE})
        outcome = await start_sweep(config, journal, "none", quiet)
        async with read_only(journal) as reader:
            episodes = await reader.episode_count(outcome.run_id)
        command = [sys.executable, "-m", "runner.cli", "audit", "faults", outcome.run_id, "--tool", TOOL,
                   "--fault", "timeout", "--journal", str(journal), "--json"]
        gate.seen, gate.hold_after = 0, episodes + 1  # one case can finish; the rest park
        process = await anyio.open_process(command)
        try:
            await until_journaled(journal, 1)
        finally:
            process.kill()  # SIGKILL: no clean-up, no shielded writes
            await process.wait()
        gate.hold_after = None
        before = len(mock.requests)
        result = await anyio.run_process(command)
        resumed = mock.requests[before:]
    report = json.loads(result.stdout)
    assert report["status"] == "completed" and sum(report["verdicts"].values()) == episodes
    assert report["verdicts"]["missing"] == 0
    assert len(resumed) <= 2 * (episodes - 1)  # the case journaled before the kill is not replayed

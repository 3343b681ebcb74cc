"""The cap holds across kills (runner.cost.budget_ledger): each reservation is durable before its call is
sent, and the next process counts what a killed one had in flight as spent."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest

from bench.mock_provider import MockUsage, Recorded, Reply, Response, serve_mock, tool_loop
from runner.config.prices import Price
from runner.cost.budget import Budget
from runner.cost.budget_ledger import BudgetLedger, judge_holds
from runner.cost.pricing import worst_case_usd
from runner.journal import Batch, open_journal
from runner.journal.rows import ModelCallRow
from runner.models.priced import PricedModel
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import AssistantTurn, Message

RUN = "r1"
PRICE = Price(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)
KEY = "sk-loopback-ledger-test-0123456789"


def _call_row(request_hash: str, at: float, cost: float = 0.01) -> ModelCallRow:
    return ModelCallRow(RUN, "u", "s", "agent", "m", request_hash, "ok", 1, False, 10, 0, 0, 10, cost, 0.1, at, "")


async def test_a_reservation_is_durable_before_its_call_is_sent(tmp_path: Path) -> None:
    seen: list[int] = []
    async with open_journal(tmp_path / "j.sqlite") as journal:

        class Provider:
            name = "m"

            async def respond(self, request: ModelRequest) -> ModelResponse:
                seen.append(len(await journal.read.open_holds(RUN)))  # a reader sees only what is committed
                return ModelResponse(AssistantTurn(text="ok"), Usage(input_tokens=10, output_tokens=10))

        budget = Budget(1.0)
        model = PricedModel(Provider(), PRICE, budget, None, ledger=BudgetLedger(journal, RUN))
        request = ModelRequest(system="s", messages=(Message("user", "hi"),), max_output_tokens=100)
        await model.respond(request)
        await model.respond(request)
        [first, second] = await journal.read.open_holds(RUN)
    assert seen == [1, 2]
    assert first.amount_usd == pytest.approx(worst_case_usd(request, PRICE)) and first.hold_id != second.hold_id


async def test_a_hold_no_later_call_row_settles_is_lost_and_counted_by_every_later_process(tmp_path: Path) -> None:
    async with open_journal(tmp_path / "j.sqlite") as journal:
        batch = Batch()
        batch.budget_hold(RUN, "a", "hash-a", 0.25, 100.0)  # answered: its call row came after it
        batch.model_call(_call_row("hash-a", 101.0))
        batch.budget_hold(RUN, "b", "hash-b", 0.5, 200.0)  # killed in flight: the only row is older
        batch.model_call(_call_row("hash-b", 150.0))
        batch.budget_hold(RUN, "c", "hash-c", 0.125, 300.0)  # killed before any row
        batch.budget_hold("other", "d", "hash-d", 4.0, 300.0)  # another run's
        await journal.commit(batch)
        lost = await judge_holds(journal, RUN)
        left = await journal.read.open_holds(RUN)
        await journal.commit(Batch().budget_hold(RUN, "e", "hash-e", 1.0, 400.0))  # this process's, open
        again = await judge_holds(journal, RUN)  # the process after: e is lost too; b and c stay counted
        other = await journal.read.open_holds("other")
    assert lost == 0.5 + 0.125 and left == []
    assert again == 0.5 + 0.125 + 1.0 and [h.hold_id for h in other] == ["d"]


def _priced(usage: MockUsage) -> float:
    fresh = usage.input_tokens - usage.cached_tokens
    return (fresh * PRICE.input + usage.cached_tokens * PRICE.cached_input + usage.output_tokens * PRICE.output) / 1e6


@pytest.mark.heavy
async def test_what_the_provider_billed_stays_under_the_cap_across_kills_with_calls_in_flight(
        built_suite: Path, tmp_path: Path) -> None:
    # Dear answers (4,000 of the 4,096 output tokens a call reserves), each 0.5 s late, 4 in flight: each
    # kill lands with calls answered by the provider (billed) that the journal never recorded. The bill
    # is the mock's own tally of every answer it produced, priced.
    inner = tool_loop(calls_before_finish=1, output_tokens=4_000)
    billed: list[MockUsage] = []

    def respond(request: Recorded) -> Response:
        reply = inner(request)
        assert isinstance(reply, Reply)
        billed.append(reply.usage)
        return dataclasses.replace(reply, delay_s=0.5)

    journal = tmp_path / "j.sqlite"
    async with serve_mock(respond) as mock:
        model = f"openai-compatible:mock@{mock.base_url}/v1"
        cap = 1.0  # about 30 calls
        (tmp_path / "sweep.toml").write_text("\n".join([
            f'models = ["{model}"]', 'methods = ["blind"]', 'scenarios = ["retail_l1"]', "pilot = 4",
            f'dataset = "{built_suite}"', f"budget = {cap}", "concurrency = 4", f'[prices."{model}"]',
            "input = 2.0", "cached_input = 0.5", "cache_write = 2.5", "output = 8.0"]) + "\n")
        env = {**os.environ, "OPENAI_COMPATIBLE_API_KEY": KEY}
        base = [sys.executable, "-m", "runner.cli"]
        first = [*base, "run", "--config", str(tmp_path / "sweep.toml"), "--journal", str(journal),
                 "--display", "none"]
        for kill in range(3):
            command = first if kill == 0 else _resume(base, journal)
            log = (tmp_path / f"process-{kill}.log").open("wb")
            process = await anyio.open_process(command, env=env, stdout=log, stderr=log)
            before = len(billed)
            with anyio.fail_after(120):
                while len(billed) < before + 4 and process.returncode is None:  # noqa: ASYNC110 - the mock's tasks
                    await anyio.sleep(0.05)
            assert process.returncode is None, (tmp_path / f"process-{kill}.log").read_text()[-800:]
            process.send_signal(signal.SIGKILL)
            await process.wait()
            log.close()
        final = await anyio.run_process(_resume(base, journal), env=env, check=False)
    assert final.returncode == 0, final.stderr.decode()[-800:]
    assert sum(_priced(usage) for usage in billed) <= cap


def _resume(base: list[str], journal: Path) -> list[str]:
    with sqlite3.connect(journal) as db:
        [(run_id,)] = db.execute("SELECT run_id FROM runs").fetchall()
    return [*base, "resume", run_id, "--journal", str(journal), "--display", "none"]

"""The client stack's batch route: test calls of a batching model go through batches at the batch price with
route 'batch', serving calls stay live, a failed item goes live at the live price, and a budget stop
cancels the batch, charges its partial results and keeps the cap."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from runner.batching.batcher import Batcher, Lane
from runner.batching.waiting import BatchTiming
from runner.config.prices import Price
from runner.cost.budget import Budget
from runner.cost.pricing import cost_usd, worst_case_usd
from runner.display.progress import RunProgress
from runner.journal import Batch, Journal, open_journal
from runner.models.registry import ModelEntry
from runner.models.stack import ClientStack
from runner.providers.priority import SERVING, TEST
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import Message
from tests.runner.batching.fake_backend import FakeBackend, echo
from tests.runner.batching.test_batcher import until

RUN = "r1"
LIVE = Price(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)
BATCH = Price(input=1.0, cached_input=0.25, cache_write=1.25, output=4.0)
PRICE = Price(2.0, 0.5, 2.5, 8.0, batch=BATCH)


class LiveModel:
    """The provider's live client: answers like the fake batch does, and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    @property
    def name(self) -> str:
        return "m"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        return echo({"last": request.messages[-1].content})


def stack(journal: Journal, backend: FakeBackend, live: LiveModel, budget: Budget | None = None,
          **timing: object) -> ClientStack:
    progress = RunProgress(RUN, str(journal.path))
    batcher = Batcher(RUN, journal, {"m": Lane(backend, "http://m.test/v1")},
                      BatchTiming(**{"max_items": 1000, "on_item_failure": "resubmit", "wait_s": 0.01,  # type: ignore[arg-type]
                                     "poll_s": 0.01, "poll_max_s": 0.02, **timing}),
                      say=lambda line: None)
    return ClientStack(run_id=RUN, journal=journal, progress=progress,
                       models={"m": ModelEntry("m", live, offline=False, max_tokens=64)}, prices={"m": PRICE},
                       budget=budget, concurrency=8, model_concurrency=8, batcher=batcher,
                       batch_prices={"m": BATCH})


def ask(text: str) -> ModelRequest:
    return ModelRequest(system="s", messages=(Message(role="user", content=text),), max_output_tokens=1000)


def calls(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT unit_id, route, cost_usd FROM model_calls ORDER BY unit_id").fetchall()


async def test_test_calls_batch_at_the_batch_price_and_serving_stays_live(tmp_path: Path) -> None:
    backend, live = FakeBackend(), LiveModel()
    async with open_journal(tmp_path / "j.sqlite") as journal:
        clients = stack(journal, backend, live)
        assert clients.batcher is not None
        async with clients.batcher.running():
            tested = await clients.client("m", "test-unit", "s", "agent", TEST).respond(ask("t"))
            served = await clients.client("m", "serve-unit", "s", "agent", SERVING).respond(ask("s"))
        await journal.commit(Batch())  # the call rows enqueued before it are durable after it
        items = await journal.read.batch_items(RUN)
    usage = Usage(input_tokens=100, output_tokens=10)
    assert tested.turn.text == "re: t" and served.turn.text == "re: s" and live.calls == 1
    assert tested.cost_usd == pytest.approx(cost_usd(usage, BATCH))
    assert served.cost_usd == pytest.approx(cost_usd(usage, LIVE))
    assert calls(tmp_path / "j.sqlite") == [("serve-unit", "live", pytest.approx(cost_usd(usage, LIVE))),
                                            ("test-unit", "batch", pytest.approx(cost_usd(usage, BATCH)))]
    assert [(i.unit_id, i.status) for i in items] == [("test-unit", "succeeded")]
    assert backend.batches["batch_1"].items[0].body["max"] == 64  # capped before it joined the batch


async def test_an_item_failed_in_its_batches_goes_live_at_the_live_price(tmp_path: Path) -> None:
    backend, live = FakeBackend(outcome=lambda custom_id, seen: "expired"), LiveModel()
    async with open_journal(tmp_path / "j.sqlite") as journal:
        clients = stack(journal, backend, live)
        assert clients.batcher is not None
        async with clients.batcher.running():
            answer = await clients.client("m", "u", "s", "agent", TEST).respond(ask("t"))
        await journal.commit(Batch())  # the call rows enqueued before it are durable after it
    assert answer.turn.text == "re: t" and live.calls == 1 and backend.submits == 2
    assert calls(tmp_path / "j.sqlite") == [("u", "live", pytest.approx(cost_usd(answer.usage, LIVE)))]


async def test_a_call_short_of_room_waits_for_a_batch_then_is_answered_under_the_cap(tmp_path: Path) -> None:
    # Four items' worst cases fit and a fifth does not; their batch waits an hour for more items (wait_s),
    # so only the fifth's wait for room makes it go at once. Its answers settle far below their worst
    # case, and the fifth then gets room and is batched, sent at once when the run drains for its budget stop.
    backend, live = FakeBackend(auto_end=False), LiveModel()
    worst = worst_case_usd(ModelRequest(system="s", messages=(Message("user", "a0"),), max_output_tokens=64), BATCH)
    budget = Budget(worst * 4.5)
    async with open_journal(tmp_path / "j.sqlite") as journal:
        clients = stack(journal, backend, live, budget, wait_s=3600.0)
        batcher = clients.batcher
        assert batcher is not None
        ended: dict[str, str] = {}

        async def episode(n: int) -> None:
            client = clients.client("m", f"u{n}", "s", "agent", TEST)
            ended[f"a{n}"] = (await client.respond(ask(f"a{n}"))).turn.text

        async def batches(count: int) -> bool:
            return len(backend.batches) == count

        async def four_waiting() -> bool:
            return budget.reserved == pytest.approx(4 * worst)

        async def fifth_holds_room() -> bool:  # the four answered and settled, and the fifth took its room
            return len(ended) == 4 and not budget.waiting and budget.reserved == pytest.approx(worst)

        async with batcher.running(), anyio.create_task_group() as group:
            for n in range(4):
                group.start_soon(episode, n)
            await until(four_waiting)
            assert not backend.batches  # collected, waiting out wait_s for more
            group.start_soon(episode, 9)  # its worst case does not fit beside the four: it waits for room
            await until(lambda: batches(1))  # ... so the four went at once
            assert budget.waiting == 1 and len(backend.batches["batch_1"].items) == 4
            backend.end("batch_1")
            await until(fifth_holds_room)
            assert not budget.waiting and not await batches(2)  # collected, waiting out wait_s again
            batcher.drain()  # the run is stopping for its budget: no episode will add to it
            await until(lambda: batches(2))
            backend.end("batch_2")
        await journal.commit(Batch())  # the call rows enqueued before it are durable after it
        statuses = [row.status for row in await journal.read.provider_batches(RUN)]
    assert ended == {f"a{n}": f"re: a{n}" for n in (0, 1, 2, 3, 9)} and live.calls == 0
    assert statuses == ["collected", "collected"] and not backend.cancels
    charged = sum(float(str(row[2])) for row in calls(tmp_path / "j.sqlite"))
    answered = cost_usd(Usage(input_tokens=100, output_tokens=10), BATCH)
    assert budget.spent == pytest.approx(charged) == pytest.approx(5 * answered)
    assert budget.reserved == 0 and budget.spent <= budget.cap and not budget.refused

"""The batcher against an in-memory backend: grouping, the two thresholds, journal before use, resume
without resubmitting, the budget stop's cancel, failed items tried once more then live."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from runner.batching.batcher import Batcher, Lane
from runner.batching.waiting import BatchTiming, SendLive
from runner.common.errors import RunAborted
from runner.journal import Batch, Journal, open_journal
from runner.providers.batch_api import BatchItem
from runner.providers.taxonomy import Failure, InfrastructureError
from simulators.model_api import ModelRequest
from simulators.protocol import Message
from tests.runner.batching.fake_backend import FakeBackend, ManualClock

RUN = "r1"


def request(text: str) -> ModelRequest:
    return ModelRequest(system="s", messages=(Message(role="user", content=text),), max_output_tokens=64)


async def until(condition: Callable[[], Awaitable[bool]], seconds: float = 30.0) -> None:
    """Wait for `condition` with a generous deadline (checked every 10 ms)."""
    with anyio.fail_after(seconds):
        while not await condition():  # noqa: ASYNC110 - the state lives in another task or the journal
            await anyio.sleep(0.01)


async def submitted(journal: Journal) -> bool:
    rows = await journal.read.open_batches(RUN)
    return bool(rows) and bool(rows[0].batch_id)


def cid(text: str) -> str:
    return (text.encode().hex() + "0" * 64)[:64]


@asynccontextmanager
async def batcher_of(journal: Journal, backends: dict[str, FakeBackend], clock: ManualClock | None = None,
                     **timing: Any) -> AsyncIterator[Batcher]:
    lanes = {model: Lane(backend, f"http://{model}.test/v1") for model, backend in backends.items()}
    settings = BatchTiming(**{"max_items": 1000, "on_item_failure": "resubmit", "wait_s": 30.0, "poll_s": 0.01,
                              "poll_max_s": 0.02, **timing})
    said: list[str] = []
    batcher = Batcher(RUN, journal, lanes, settings, clock=clock, say=said.append)
    async with batcher.running():
        yield batcher


async def answers(batcher: Batcher, model: str, texts: list[str]) -> dict[str, str]:
    got: dict[str, str] = {}

    async def one(text: str) -> None:
        got[text] = (await batcher.ask(model, cid(text), f"u-{text}", request(text))).turn.text

    async with anyio.create_task_group() as group:
        for text in texts:
            group.start_soon(one, text)
    return got


async def test_size_threshold_submits_without_waiting_and_groups_per_model(tmp_path: Path) -> None:
    a, b = FakeBackend(), FakeBackend()
    clock = ManualClock()  # never advanced: only the size threshold can submit
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"a": a, "b": b}, clock,
                                                                          max_items=3) as batcher:
        with anyio.fail_after(30):
            got_a, got_b = await answers(batcher, "a", ["1", "2", "3"]), await answers(batcher, "b", ["x", "y", "z"])
        assert got_a == {t: f"re: {t}" for t in "123"} and got_b == {t: f"re: {t}" for t in "xyz"}
        assert [len(x.items) for x in a.batches.values()] == [3] and [len(x.items) for x in b.batches.values()] == [3]
        rows = await journal.read.provider_batches(RUN)
        assert sorted((r.model, r.status, r.items, r.round) for r in rows) == [("a", "collected", 3, 1),
                                                                                ("b", "collected", 3, 1)]
        assert {r.endpoint for r in rows} == {"http://a.test/v1", "http://b.test/v1"}


async def test_time_threshold_submits_what_waits_once_the_oldest_has_waited(tmp_path: Path) -> None:
    backend = FakeBackend()
    clock = ManualClock()
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"m": backend}, clock,
                                                                          wait_s=30.0) as batcher:
        got: list[str] = []

        async def ask(text: str) -> None:
            got.append((await batcher.ask("m", cid(text), "u", request(text))).turn.text)

        async with anyio.create_task_group() as group:
            group.start_soon(ask, "first")
            group.start_soon(ask, "second")

            async def both_wait() -> bool:
                return clock.sleepers > 0 and batcher.waiting == 2

            await until(both_wait)
            clock.advance(29.0)
            for _ in range(20):
                await anyio.sleep(0.01)
            assert backend.submits == 0 and not got  # 29 s: not yet
            clock.advance(1.0)
        assert sorted(got) == ["re: first", "re: second"]
        assert backend.submits == 1 and len(next(iter(backend.batches.values())).items) == 2


async def test_an_episodes_turns_stay_in_order(tmp_path: Path) -> None:
    backend = FakeBackend()
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"m": backend},
                                                                          wait_s=0.01) as batcher:
        seen = [(await batcher.ask("m", cid(f"turn{i}"), "u", request(f"turn{i}"))).turn.text for i in range(4)]
    assert seen == [f"re: turn{i}" for i in range(4)]
    order = [item.custom_id for b in backend.batches.values() for item in b.items]
    assert order == [cid(f"turn{i}") for i in range(4)]  # one batch per turn, each after the last answer


class _Log:
    def __init__(self) -> None:
        self.events: list[str] = []

    def committed(self, batch: Batch, waited_s: float) -> None:
        self.events.extend(s.kind for s in batch.statements if s.kind in ("provider_batch", "batch_item",
                                                                           "batch_status"))

    def enqueued(self, batch: Batch) -> None:
        pass

    def read(self, seconds: float) -> None:
        pass


async def test_results_are_journaled_before_any_is_used(tmp_path: Path) -> None:
    backend = FakeBackend()
    pending_at_read: list[list[str]] = []
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"m": backend},
                                                                          wait_s=0.01) as batcher:
        log = _Log()
        journal.observe(log)

        def at_read(batch: object) -> None:  # the label and every item are on disk before any result is read
            pending_at_read.append(list(log.events))

        backend.on_results = at_read

        async def ask(text: str) -> None:
            await batcher.ask("m", cid(text), "u", request(text))
            log.events.append("answered")

        async with anyio.create_task_group() as group:
            for text in ("p", "q"):
                group.start_soon(ask, text)
        journal.observe(None)
        items = await journal.read.batch_items(RUN)
    assert pending_at_read and all(e[:1] == ["provider_batch"] and "batch_item" not in e for e in pending_at_read)
    assert log.events.index("batch_item") < log.events.index("answered")
    assert {(i.status, i.answer is not None) for i in items} == {("succeeded", True)}


async def test_resume_polls_the_same_batch_and_never_resubmits(tmp_path: Path) -> None:
    backend = FakeBackend(auto_end=False)
    path = tmp_path / "j.sqlite"
    async with open_journal(path) as journal:
        async with batcher_of(journal, {"m": backend}, wait_s=0.01) as batcher:
            async with anyio.create_task_group() as group:
                for text in ("a", "b"):
                    group.start_soon(batcher.ask, "m", cid(text), "u", request(text))
                await until(lambda: submitted(journal))
                group.cancel_scope.cancel()  # the process dies with its batch outstanding
    assert sum(backend.submitted.values()) == 2
    backend.end()
    async with open_journal(path) as journal, batcher_of(journal, {"m": backend}, wait_s=0.01) as batcher:
        with anyio.fail_after(30):
            got = await answers(batcher, "m", ["a", "b"])
        assert batcher.figures.recovered == 1
    assert got == {"a": "re: a", "b": "re: b"}
    assert backend.submitted == {cid("a"): 1, cid("b"): 1} and backend.submits == 1


async def test_answers_journaled_but_unused_come_from_the_journal(tmp_path: Path) -> None:
    backend = FakeBackend()
    path = tmp_path / "j.sqlite"
    async with open_journal(path) as journal, batcher_of(journal, {"m": backend}, wait_s=0.01) as batcher:
        await batcher.ask("m", cid("a"), "u", request("a"))
    async with open_journal(path) as journal, batcher_of(journal, {"m": backend}, wait_s=0.01) as batcher:
        again = await batcher.ask("m", cid("a"), "u", request("a"))
        assert batcher.figures.from_journal == 1
    assert again.turn.text == "re: a" and again.usage.output_tokens == 10 and backend.submits == 1


async def test_a_batch_being_created_is_found_by_label(tmp_path: Path) -> None:
    backend = FakeBackend()
    backend.fail_submit = InfrastructureError("reply lost", failure=Failure.TRANSPORT)
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"m": backend},
                                                                          wait_s=0.01) as batcher:
        got = await batcher.ask("m", cid("a"), "u", request("a"))
        rows = await journal.read.provider_batches(RUN)
    assert got.turn.text == "re: a" and backend.submits == 1
    assert [(r.batch_id, r.status) for r in rows] == [("batch_1", "collected")]


async def test_submitting_at_a_crash_recovered_by_label_or_submitted_again(tmp_path: Path) -> None:
    for findable in (True, False):
        backend = FakeBackend(findable=findable)
        path = tmp_path / f"j{findable}.sqlite"
        async with open_journal(path) as journal:
            label = f"sb-{RUN}-00001"
            await journal.commit(Batch().provider_batch(RUN, label, "fake", "http://m", "m", [(cid("a"), "u")], 1, 0,
                                                        0.0))
            if findable:  # the provider made it; its id never reached the journal
                await backend.submit([], label)
                backend.batches["batch_1"].items.append(BatchItem(cid("a"), {"last": "a"}))
                backend.batches["batch_1"].outcomes[cid("a")] = "succeeded"
                backend.submitted[cid("a")] += 1
            async with batcher_of(journal, {"m": backend}, wait_s=0.01) as batcher:
                got = await batcher.ask("m", cid("a"), "u", request("a"))
                figures = batcher.figures
        assert got.turn.text == "re: a"
        assert backend.submitted[cid("a")] == 1  # found: the provider's; not found: submitted again, once
        assert (figures.recovered, figures.never_created) == ((1, 0) if findable else (0, 1))


async def test_failed_items_are_resubmitted_once_then_sent_live(tmp_path: Path) -> None:
    backend = FakeBackend(outcome=lambda custom_id, seen: "expired")
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"m": backend},
                                                                          wait_s=0.01) as batcher:
        with pytest.raises(SendLive):
            await batcher.ask("m", cid("a"), "u", request("a"))
        rows = await journal.read.provider_batches(RUN)
    assert backend.submitted[cid("a")] == 2 and [r.resubmission for r in rows] == [0, 1]
    assert (batcher.figures.resubmitted, batcher.figures.sent_live) == (1, 1)


async def test_a_second_try_that_succeeds_answers(tmp_path: Path) -> None:
    backend = FakeBackend(outcome=lambda custom_id, seen: "errored" if seen == 0 else "succeeded")
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"m": backend},
                                                                          wait_s=0.01) as batcher:
        assert (await batcher.ask("m", cid("a"), "u", request("a"))).turn.text == "re: a"


async def test_live_at_once_and_rejected_items(tmp_path: Path) -> None:
    backend = FakeBackend(outcome=lambda custom_id, seen: "canceled")
    async with open_journal(tmp_path / "a.sqlite") as journal, batcher_of(journal, {"m": backend}, wait_s=0.01,
                                                                          on_item_failure="live") as batcher:
        with pytest.raises(SendLive):
            await batcher.ask("m", cid("a"), "u", request("a"))
    assert backend.submitted[cid("a")] == 1
    refused = FakeBackend(outcome=lambda custom_id, seen: "errored", error="invalid_request_error: bad max_tokens")
    async with open_journal(tmp_path / "b.sqlite") as journal, batcher_of(journal, {"m": refused},
                                                                          wait_s=0.01) as batcher:
        with pytest.raises(InfrastructureError) as caught:
            await batcher.ask("m", cid("a"), "u", request("a"))
    assert caught.value.failure is Failure.REJECTED and caught.value.policy.outcome == "stop_run"
    assert refused.submitted[cid("a")] == 1  # never resent


async def test_an_item_that_failed_twice_before_a_resume_goes_live_without_a_third_batch(tmp_path: Path) -> None:
    backend = FakeBackend(outcome=lambda custom_id, seen: "expired")
    path = tmp_path / "j.sqlite"
    async with open_journal(path) as journal, batcher_of(journal, {"m": backend}, wait_s=0.01) as batcher:
        with pytest.raises(SendLive):
            await batcher.ask("m", cid("a"), "u", request("a"))
    async with open_journal(path) as journal, batcher_of(journal, {"m": backend}, wait_s=0.01) as batcher:
        with pytest.raises(SendLive):  # the episode died before its live call; resumed, it asks again
            await batcher.ask("m", cid("a"), "u", request("a"))
    assert backend.submitted[cid("a")] == 2


async def test_a_provider_that_cannot_be_asked_about_a_batch_being_created_stops_the_start(tmp_path: Path) -> None:
    class Unreachable(FakeBackend):
        async def find(self, label: str) -> str | None:
            raise InfrastructureError("connection refused", failure=Failure.TRANSPORT)

    backend = Unreachable()
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await journal.commit(Batch().provider_batch(RUN, f"sb-{RUN}-00001", "fake", "http://m", "m", [(cid("a"), "u")],
                                                    1, 0, 0.0))
        with pytest.raises(RunAborted, match="cannot tell whether batch sb-r1-00001"):
            async with batcher_of(journal, {"m": backend}):
                pass
        rows = await journal.read.open_batches(RUN)
    assert [r.status for r in rows] == ["submitting"] and backend.submits == 0  # kept for the next resume


async def test_the_dashboard_line_counts_the_batches_out_their_items_and_what_waits(tmp_path: Path) -> None:
    backend = FakeBackend(auto_end=False)
    clock = ManualClock()  # never advanced: the third request waits for a size that never comes
    async with open_journal(tmp_path / "j.sqlite") as journal, batcher_of(journal, {"m": backend}, clock,
                                                                          max_items=2) as batcher:
        assert batcher.dashboard_line() == "batches 0 out (0 items), 0 waiting; 0 sent, 0 resubmitted, 0 live"
        got: list[str] = []

        async def ask(text: str) -> None:
            got.append((await batcher.ask("m", cid(text), "u", request(text))).turn.text)

        async with anyio.create_task_group() as group:
            for text in ("1", "2"):
                group.start_soon(ask, text)

            async def polled() -> bool:
                return await submitted(journal) and batcher.waiting == 2 and "1 out" in batcher.dashboard_line()

            await until(polled)
            group.start_soon(ask, "3")

            async def third_waits() -> bool:
                return batcher.waiting == 3

            await until(third_waits)
            assert batcher.dashboard_line() == "batches 1 out (2 items), 1 waiting; 1 sent, 0 resubmitted, 0 live"
            backend.end()
            clock.advance(1.0)  # the next poll (poll_s 0.01) sees it ended; the third's 30 s are far off

            async def two_answered() -> bool:
                return len(got) == 2

            await until(two_answered)
            assert batcher.dashboard_line() == "batches 0 out (0 items), 1 waiting; 1 sent, 0 resubmitted, 0 live"
            group.cancel_scope.cancel()

"""Scheduling guarantees of the engine, on a real journal with a toy domain and a counting method."""

from __future__ import annotations

import sqlite3
from dataclasses import fields
from pathlib import Path
from typing import Any

import anyio
import pytest

from runner.config.plan import Stream
from runner.config.settings import SweepConfig
from runner.display.progress import RunProgress
from runner.journal import Journal, open_journal
from runner.models.stack import ClientStack
from runner.providers.priority import SERVING, TEST, ServingClaim
from runner.schedule.engine import TEST_EPISODES_IN_FLIGHT, Engine, stream_progress
from runner.schedule.sweep import create_run
from runner.workers.handle import InProcessMethod
from simulators.dataset import Dataset
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn, Scenario
from tests.fakes import (
    CountingMethod,
    ScriptModel,
    ToyDomain,
    counting_spec,
    offline_clients,
    toy_decider,
    toy_scenario,
)

RUN = "r-test"


def context_of(request: ModelRequest) -> dict[str, str]:
    system = request.full_system
    tail = system.rsplit("\n", 2)[-2] if system.endswith("\n") else system
    return dict(part.split("=") for part in tail.split() if "=" in part)



def make_engine(journal: Journal, model: ScriptModel, block_size: int, instances: list[CountingMethod],
                stream: Stream, concurrency: int = 8, **engine_fields: Any) -> Engine:
    progress = RunProgress(run_id=RUN, journal_path=str(journal.path))
    progress.streams[stream.stream_id] = stream_progress(stream)
    return Engine(run_id=RUN, journal=journal, progress=progress,
                  clients=offline_clients(journal, progress, model, concurrency=concurrency),
                  block_size=block_size, max_episode_attempts=2,
                  domains=lambda name: ToyDomain(),
                  **{"method_specs": lambda name: counting_spec(instances), **engine_fields})


async def create(journal: Journal, scenario: Scenario, stream: Stream) -> None:
    dataset = Dataset(root=Path("."), scenarios={scenario.name: scenario}, fingerprint="f", file_hashes={})
    config = SweepConfig(models=("script",), methods=("counting",), scenarios=(scenario.name,))
    await create_run(journal, RUN, config, dataset, [stream], methods={})  # a fake method: no provenance


def stream_of(scenario: Scenario) -> Stream:
    return Stream("script", "counting", scenario, scenario.serving, scenario.test)


async def test_block_size_one_starts_once_the_previous_episode_is_learned_and_handed_to_the_writer(
        tmp_path: Path) -> None:
    scenario = toy_scenario(windows=3, serving_per_window=5, test_per_window=2)
    stream = stream_of(scenario)
    last_journaled: list[tuple[int, int]] = []
    journal_box: list[Journal] = []

    async def respond(request: ModelRequest) -> AssistantTurn:
        first_turn = len(request.messages) == 1
        position = int(request.messages[0].content.split("\n", 1)[0].split(": ")[1])
        is_serving = request.messages[0].content.split("case c-")[1].startswith("s")
        if first_turn and is_serving:
            # The live method has learned from everything before; the journal holds every episode but the
            # previous one at least (whose transaction the writer has: it may still be committing it).
            row = await journal_box[0].fetchone(
                "SELECT max(u.position) FROM units u JOIN episodes e USING (run_id, unit_id) "
                "WHERE u.phase = 'serving'", ())
            last_journaled.append((position, row[0] or 0))
            assert int(context_of(request)["seen"]) == position - 1
        return await toy_decider(lambda r: context_of(r)["best"])(request)

    model = ScriptModel(respond)
    instances: list[CountingMethod] = []
    async with open_journal(tmp_path / "j.sqlite") as journal:
        journal_box.append(journal)
        await create(journal, scenario, stream)
        await make_engine(journal, model, 1, instances, stream).run([stream])
    assert len(last_journaled) == 15
    assert all(position - 2 <= last <= position - 1 for position, last in last_journaled)


async def test_the_next_serving_block_runs_while_the_previous_one_is_committed(tmp_path: Path) -> None:
    """A serving block's commit is off the serving path: with the journal's write lock held by another
    connection, the next block still starts; releasing the lock then lets both commit, in order."""
    scenario = toy_scenario(windows=1, serving_per_window=3, test_per_window=1)
    stream = stream_of(scenario)
    blocker: list[sqlite3.Connection] = []
    started_while_locked: list[int] = []

    async def respond(request: ModelRequest) -> AssistantTurn:
        position = int(request.messages[0].content.split("\n", 1)[0].split(": ")[1])
        if position == 2 and len(request.messages) == 1 and blocker:
            started_while_locked.append(position)
            blocker.pop().rollback()  # let the writer commit block 1 (it was waiting on the lock)
        return await toy_decider(lambda r: context_of(r)["best"])(request)

    instances: list[CountingMethod] = []
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        lock = sqlite3.connect(tmp_path / "j.sqlite", isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # the write lock: block 1's commit waits (busy_timeout) until released
        blocker.append(lock)
        await make_engine(journal, ScriptModel(respond), 1, instances, stream).run([stream])
        rows = await journal.fetchall("SELECT u.position FROM units u JOIN episodes e USING (run_id, unit_id) "
                                      "WHERE u.phase = 'serving' ORDER BY u.position", ())
    lock.close()
    assert started_while_locked == [2]
    assert [r[0] for r in rows] == [1, 2, 3]


async def test_test_episodes_see_the_state_at_the_end_of_their_window(tmp_path: Path) -> None:
    scenario = toy_scenario(windows=3, serving_per_window=4, test_per_window=3)
    stream = stream_of(scenario)
    model = ScriptModel(toy_decider(lambda r: context_of(r)["best"]))
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        await make_engine(journal, model, 1, [], stream).run([stream])
    for request in model.requests:
        if len(request.messages) != 1 or "case c-t" not in request.messages[0].content:
            continue
        window = int(request.messages[0].content.split("case c-t")[1].split("-")[0])
        assert context_of(request)["seen"] == str(4 * (window + 1))


async def test_a_test_set_larger_than_its_in_flight_limit_sees_only_the_frozen_state(tmp_path: Path) -> None:
    """More test tasks per window than may run at once: the later ones start after the serving stream has
    learned more, and must still see the state frozen at their window's end (not the live method)."""
    per_window, tests = 4, TEST_EPISODES_IN_FLIGHT + 16
    scenario = toy_scenario(windows=2, serving_per_window=per_window, test_per_window=tests)
    stream = stream_of(scenario)
    served_past = {0: anyio.Event()}
    decide = toy_decider(lambda r: context_of(r)["best"])

    async def respond(request: ModelRequest) -> AssistantTurn:
        content = request.messages[0].content
        if len(request.messages) == 1 and "case c-s" in content and int(context_of(request)["seen"]) > per_window:
            served_past[0].set()  # window 1's serving has learned from at least one more episode
        if len(request.messages) == 1 and "case c-t0-" in content:
            with anyio.fail_after(60):  # a safety net: the event comes from the serving stream
                await served_past[0].wait()
        return await decide(request)

    model = ScriptModel(respond)
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        await make_engine(journal, model, 1, [], stream, concurrency=4 * tests).run([stream])
    first_turns = [r for r in model.requests if len(r.messages) == 1 and "case c-t0-" in r.messages[0].content]
    assert len(first_turns) == tests and served_past[0].is_set()
    assert {context_of(r)["seen"] for r in first_turns} == {str(per_window)}


async def test_block_size_twelve_matches_the_reference_blocks(tmp_path: Path) -> None:
    scenario = toy_scenario(windows=2, serving_per_window=30, test_per_window=1)
    stream = stream_of(scenario)
    instances: list[CountingMethod] = []
    model = ScriptModel(toy_decider(lambda r: context_of(r)["best"]))
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        await make_engine(journal, model, 12, instances, stream).run([stream])
    serving_learner = instances[0]
    # Blocks restart at each window: 30 = 12 + 12 + 6, twice.
    assert serving_learner.learn_sizes == [12, 12, 6, 12, 12, 6]
    # Every episode of a block saw the same frozen state.
    firsts = [r for r in model.requests if len(r.messages) == 1 and "case c-s" in r.messages[0].content]
    seen = [int(context_of(r)["seen"]) for r in firsts]
    assert {value: seen.count(value) for value in set(seen)} == {0: 12, 12: 12, 24: 6, 30: 12, 42: 12, 54: 6}


async def test_learning_from_the_score_line_recovers_after_each_flip(tmp_path: Path) -> None:
    scenario = toy_scenario(windows=4, serving_per_window=6, test_per_window=4)
    stream = stream_of(scenario)
    model = ScriptModel(toy_decider(lambda r: context_of(r)["best"]))
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        await make_engine(journal, model, 1, [], stream).run([stream])
        rows = await journal.fetchall("SELECT u.phase, e.reward FROM episodes e JOIN units u USING (run_id, unit_id)")
        statuses = await journal.fetchall("SELECT DISTINCT status FROM units")
    test_rewards = [r[1] for r in rows if r[0] == "test"]
    assert len(test_rewards) == 16 and all(r == 1.0 for r in test_rewards)
    assert [s[0] for s in statuses] == ["done"]


@pytest.mark.parametrize("block_size", [1, 5])
async def test_a_stopped_engine_leaves_no_half_block(tmp_path: Path, block_size: int) -> None:
    scenario = toy_scenario(windows=2, serving_per_window=10, test_per_window=2)
    stream = stream_of(scenario)
    engine_box: list[Engine] = []
    calls = 0

    async def respond(request: ModelRequest) -> AssistantTurn:
        nonlocal calls
        calls += 1
        if calls == 13:
            engine_box[0].stop.request("test stop")
        return await toy_decider(lambda r: "yes")(request)

    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        engine = make_engine(journal, ScriptModel(respond), block_size, [], stream)
        engine_box.append(engine)
        await engine.run([stream])
        done = await journal.fetchall(
            "SELECT count(*) FROM units WHERE phase = 'serving' AND status = 'done'")
        assert done[0][0] % block_size == 0 and 0 < done[0][0] < 20
        # A new engine restores the method from the checkpoint plus the replayed blocks after it.
        resumed: list[CountingMethod] = []
        handle, _, _ = await make_engine(journal, ScriptModel(toy_decider(lambda r: "yes")), block_size,
                                         resumed, stream).methods.restore(stream)
    restored = handle.method if isinstance(handle, InProcessMethod) else None
    assert isinstance(restored, CountingMethod) and restored.seen == done[0][0]


async def test_resume_after_a_stop_learns_exactly_as_an_uninterrupted_run(tmp_path: Path) -> None:
    scenario = toy_scenario(windows=3, serving_per_window=40, test_per_window=4)
    stream = stream_of(scenario)
    decide = toy_decider(lambda r: context_of(r)["best"])

    async def full_run(path: Path) -> list[CountingMethod]:
        instances: list[CountingMethod] = []
        async with open_journal(path) as journal:
            await create(journal, scenario, stream)
            await make_engine(journal, ScriptModel(decide), 1, instances, stream).run([stream])
        return instances

    reference = await full_run(tmp_path / "ref.sqlite")
    calls = 0

    async def stop_midway(request: ModelRequest) -> AssistantTurn:
        nonlocal calls
        calls += 1
        if calls == 101:  # mid window 1, between checkpoints
            engines[0].stop.request("test")
        return await decide(request)

    engines: list[Engine] = []
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        engines.append(make_engine(journal, ScriptModel(stop_midway), 1, [], stream))
        await engines[0].run([stream])
        instances: list[CountingMethod] = []
        await make_engine(journal, ScriptModel(decide), 1, instances, stream).run([stream])
        rows = await journal.fetchall("SELECT u.task_id, e.reward FROM episodes e JOIN units u USING (run_id, unit_id)")
    assert instances[0].state() == reference[0].state()
    assert all(reward == 1.0 for task_id, reward in rows if task_id.startswith("t"))


async def test_a_failed_block_commit_stops_the_stream_before_the_next_block_reaches_the_journal(
        tmp_path: Path) -> None:
    """Blocks are committed strictly in order: the block learned on top of a block whose commit failed is
    never journaled without it (a resume would otherwise replay `learn` out of order)."""
    scenario = toy_scenario(windows=1, serving_per_window=3, test_per_window=1)
    stream = stream_of(scenario)
    path = tmp_path / "j.sqlite"
    failed = stream.unit_id(scenario.serving[0])
    with pytest.raises(BaseException) as raised:
        async with open_journal(path) as journal:
            await create(journal, scenario, stream)
            planted = sqlite3.connect(path, isolation_level=None)
            planted.execute("CREATE TRIGGER planted BEFORE INSERT ON episodes WHEN NEW.unit_id = ? "
                            "BEGIN SELECT RAISE(ABORT, 'planted fault'); END".replace("?", f"'{failed}'"))
            planted.close()
            model = ScriptModel(toy_decider(lambda r: context_of(r)["best"]))
            await make_engine(journal, model, 1, [], stream).run([stream])
    assert "planted fault" in repr(raised.value)
    check = sqlite3.connect(path)
    assert check.execute("SELECT count(*) FROM episodes").fetchone() == (0,)
    check.close()


async def test_a_run_freezes_what_existed_before_it_for_the_collector_and_unfreezes_it_after(tmp_path: Path) -> None:
    """Frozen during the run (the collector skips the dataset and methods), never left frozen after."""
    import gc

    scenario = toy_scenario(windows=1, serving_per_window=2, test_per_window=2)
    stream = stream_of(scenario)
    frozen_during: list[int] = []

    async def respond(request: ModelRequest) -> AssistantTurn:
        frozen_during.append(gc.get_freeze_count())
        return await toy_decider(lambda r: context_of(r)["best"])(request)

    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        await make_engine(journal, ScriptModel(respond), 1, [], stream).run([stream])
    assert frozen_during and min(frozen_during) > 0
    assert gc.get_freeze_count() == 0


class ClaimsSeen(ClientStack):
    """The client stack, keeping the serving claims the engine takes."""

    claims: list[ServingClaim]

    def serving_claim(self, model: str) -> ServingClaim:
        claim = super().serving_claim(model)
        self.claims = [*getattr(self, "claims", []), claim]
        return claim


async def test_a_serving_stream_claims_a_slot_per_running_episode_until_its_serving_ends(tmp_path: Path) -> None:
    scenario = toy_scenario(windows=2, serving_per_window=6, test_per_window=2)
    stream = stream_of(scenario)
    seen: list[tuple[str, int]] = []
    holder: list[ClaimsSeen] = []
    decide = toy_decider(lambda r: context_of(r)["best"])

    async def respond(request: ModelRequest) -> AssistantTurn:
        phase = "serving" if "case c-s" in request.messages[0].content else "test"
        window = request.messages[0].content.split("case c-")[1].split("-")[0][1:]  # "s1-2" -> "1"
        seen.append((f"{phase}{window}", holder[0].claims[0].slots))
        return await decide(request)

    model = ScriptModel(respond)
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        engine = make_engine(journal, model, 3, [], stream)
        clients = ClaimsSeen(**{f.name: getattr(engine.clients, f.name) for f in fields(ClientStack)})
        holder.append(clients)
        engine.clients = clients
        await engine.run([stream])
    serving = [slots for phase, slots in seen if phase.startswith("serving")]
    assert serving and all(1 <= slots <= 3 for slots in serving)
    assert 3 in serving  # a block of 3 claims 3 while all three run
    last_tests = [slots for phase, slots in seen if phase == "test1"]
    assert last_tests and set(last_tests) == {0}  # serving over: nothing kept from the last test set
    assert clients.claims[0].slots == 0


async def test_each_episodes_judge_is_asked_for_at_the_episodes_priority(tmp_path: Path) -> None:
    scenario = toy_scenario(windows=2, serving_per_window=2, test_per_window=2)
    stream = stream_of(scenario)
    asked: dict[str, int] = {}

    def judges(stream: Stream, unit_id: str, priority: int) -> None:
        asked[unit_id] = priority

    model = ScriptModel(toy_decider(lambda r: context_of(r)["best"]))
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        engine = make_engine(journal, model, 1, [], stream)
        engine.judges = judges
        await engine.run([stream])
    assert {stream.unit_id(t): SERVING for t in scenario.serving}.items() <= asked.items()
    assert {u: p for u, p in asked.items() if p == TEST}.keys() == {
        unit.unit_id for task in scenario.test for unit in stream.test_units(task)}


async def test_a_test_sets_method_is_closed_once_it_has_given_its_contexts(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A test set asks its frozen method for every context at once, so its worker must end before the set's
    episodes run, not hold its memory until the last of them ends."""
    scenario = toy_scenario(windows=2, serving_per_window=3, test_per_window=4)
    stream = stream_of(scenario)
    closes: list[int] = []
    closed_before_first_test: list[int] = []
    decide = toy_decider(lambda r: context_of(r)["best"])

    async def counted_close(self: InProcessMethod) -> None:
        closes.append(1)

    async def respond(request: ModelRequest) -> AssistantTurn:
        if len(request.messages) == 1 and "case c-t0-" in request.messages[0].content:
            closed_before_first_test.append(len(closes))
        return await decide(request)

    monkeypatch.setattr(InProcessMethod, "close", counted_close)
    model = ScriptModel(respond)
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        await make_engine(journal, model, 1, [], stream).run([stream])
    # window 0's test set closed its method before its first episode's call; the serving method is still open
    assert len(closed_before_first_test) == 4 and min(closed_before_first_test) >= 1
    assert len(closes) >= 3  # each window's test set, then the serving method

"""The response cache on the model-call path: a re-run unit replays what it paid for, reading the
journal once; a unit with no cached answers (every unit of a fresh run) never reads it at all."""

from __future__ import annotations

from pathlib import Path

from runner.journal import Batch, open_journal
from runner.models.journaled import JournaledModel
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn, Message
from tests.fakes import ScriptModel

RUN, UNIT = "r1", "m|blind|s|serving|t1"


class Reads:
    """A journal observer that counts reads."""

    def __init__(self) -> None:
        self.count = 0

    def committed(self, batch: Batch, waited_s: float) -> None:
        pass

    def enqueued(self, batch: Batch) -> None:
        pass

    def read(self, seconds: float) -> None:
        self.count += 1


def request(turn: int) -> ModelRequest:
    return ModelRequest(system="s", messages=(Message("user", f"turn {turn}"),))


async def answer(request: ModelRequest) -> AssistantTurn:
    return AssistantTurn(text=f"answer to {request.messages[-1].content}")


async def test_a_fresh_unit_never_reads_and_a_cached_unit_reads_once_and_replays(tmp_path: Path) -> None:
    paid = ScriptModel(answer, cost_usd=0.5)
    reads = Reads()
    async with open_journal(tmp_path / "j.sqlite") as journal:
        journal.observe(reads)
        first = JournaledModel(paid, journal, RUN, UNIT, "m|blind|s", replayable=set())
        answers = [await first.respond(request(turn)) for turn in range(3)]
        assert reads.count == 0 and len(paid.requests) == 3
        await journal.commit(Batch())  # the enqueued call rows and answers are durable behind it

        cached = await journal.read.cached_units(RUN)
        again = JournaledModel(paid, journal, RUN, UNIT, "m|blind|s", replayable=cached)
        reads.count = 0
        replayed = [await again.respond(request(turn)) for turn in range(3)]
        assert reads.count == 1  # the unit's answers, read once
        assert len(paid.requests) == 3  # nothing asked (or paid) again
        assert [r.turn for r in replayed] == [a.turn for a in answers]
        assert all(r.cost_usd == 0.0 for r in replayed)
        await journal.commit(Batch())
        spend = await journal.read.spend(RUN)
    assert spend.by_purpose == {"agent": 1.5}


def test_a_journaled_reply_is_written_as_its_fields_in_order() -> None:
    """The row's bytes are the reply's dataclass fields, nested, as asdict() gave them (journals written
    before stay readable as they are)."""
    from dataclasses import asdict

    import orjson

    from runner.batching.answers import decode_answer as _decode
    from runner.batching.answers import encode_answer as _encode
    from simulators.model_api import ModelResponse, Usage
    from simulators.protocol import AssistantTurn, ToolCall

    turn = AssistantTurn("t", "r", (ToolCall("c1", "lookup", '{"q": 1}'),), {"openai_compat": {"x": [1]}})
    usage = Usage(input_tokens=10, output_tokens=2, reported_cost_usd=0.5)
    reply = ModelResponse(turn, usage, cost_usd=0.25, attempts=2)
    assert _encode(reply) == orjson.dumps(asdict(reply))
    assert _decode(_encode(reply)).turn == reply.turn

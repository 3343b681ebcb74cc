"""icl_full: oldest to newest; over the cap the oldest are shortened first, then dropped."""

from __future__ import annotations

from methods.icl_full import HEADER, IclFullMethod
from methods.text import estimate_tokens, short_record
from tests.methods.fakes import record, view

OBSERVATION = "o" * 800
"""Makes a full record ~290 tokens and its short form ~50 (with its heading)."""


def shown(method: IclFullMethod) -> list[tuple[int, bool]]:
    return [(e["position"], e["short"]) for e in method.state()["entries"]]


async def test_everything_fits_under_the_cap_in_stream_order() -> None:
    method = IclFullMethod()
    records = [record(p, f"task {p}", observation=OBSERVATION) for p in (1, 2, 3)]
    await method.learn(records[:2])
    await method.learn(records[2:])
    context = method.context(view(9, "anything"))
    assert context.startswith(HEADER)
    assert [context.index(r.render()) for r in records] == sorted(context.index(r.render()) for r in records)
    assert "### Episode at stream position 1 (full record)\n" + records[0].render() in context


async def test_over_the_cap_the_oldest_are_shortened_before_any_is_dropped() -> None:
    method = IclFullMethod(cap_tokens=650)
    records = [record(p, f"task {p}", observation=OBSERVATION) for p in range(1, 31)]
    await method.learn(records[:2])
    assert shown(method) == [(1, False), (2, False)]
    await method.learn(records[2:3])
    assert shown(method) == [(1, True), (2, False), (3, False)]
    context = method.context(view(9, "x"))
    assert "### Episode at stream position 1 (shortened)\n" + short_record(records[0]) in context
    assert OBSERVATION in context.split("position 2")[1]


async def test_then_the_oldest_are_dropped_and_the_newest_stays_full() -> None:
    method = IclFullMethod(cap_tokens=650)
    for p in range(1, 31):
        await method.learn([record(p, f"task {p}", observation=OBSERVATION)])
    entries = shown(method)
    positions = [p for p, _ in entries]
    assert positions == list(range(positions[0], 31)) and positions[0] > 1
    assert entries[-1] == (30, False) and all(short for _, short in entries[:-1])
    body = method.context(view(31, "x"))[len(HEADER):]
    assert estimate_tokens(body) <= 650 + len(entries)  # the cap, plus the blank lines between records


async def test_a_block_at_once_gives_the_same_history_as_one_by_one() -> None:
    records = [record(p, f"task {p}", observation=OBSERVATION) for p in range(1, 13)]
    one_by_one, block = IclFullMethod(cap_tokens=650), IclFullMethod(cap_tokens=650)
    for r in records:
        await one_by_one.learn([r])
    await block.learn(records)
    assert block.state() == one_by_one.state()

"""playbook: reflector then curator per block; deltas and counters merged deterministically; pruning."""

from __future__ import annotations

from methods.playbook import CURATOR, REFLECTOR, PlaybookMethod
from tests.methods.fakes import CannedModel, in_order, record, view

NO_REFLECTION: dict[str, list[str]] = {"right": [], "wrong": [], "tags": []}


def bullets(method: PlaybookMethod) -> list[tuple[int, str, int, int]]:
    return [(b["id"], b["text"], b["helpful"], b["harmful"]) for b in method.state()["bullets"]]


async def seeded(*texts: str) -> tuple[PlaybookMethod, CannedModel]:
    model = CannedModel(in_order(NO_REFLECTION, {"ops": [{"op": "add", "text": t} for t in texts]}))
    method = PlaybookMethod(model, "banking")
    await method.learn([record(1)])
    return method, model


async def test_a_block_costs_a_reflector_call_then_a_curator_call() -> None:
    reflection = {"right": ["checked the order"], "wrong": [], "tags": []}
    model = CannedModel(in_order(reflection, {"ops": []}))
    method = PlaybookMethod(model, "banking")
    records = [record(1), record(2, reward=0.0)]
    await method.learn(records)
    reflector, curator = model.requests
    assert (reflector.system, curator.system) == (REFLECTOR, CURATOR)
    assert all(r.purpose == "method" and r.tools == () and r.domain == "banking" for r in model.requests)
    for r in records:
        assert f"### Episode at stream position {r.position}, score {r.score}/100\n{r.render()}" in model.users()[0]
    assert "## Playbook\n(empty)" in model.users()[0]
    assert '"checked the order"' in model.users()[1]


async def test_adds_edits_removes_and_counters_merge_in_order() -> None:
    method, model = await seeded("Verify identity first", "Approve loans under 5000", "Deny all wires")
    assert bullets(method) == [(1, "Verify identity first", 0, 0), (2, "Approve loans under 5000", 0, 0),
                               (3, "Deny all wires", 0, 0)]
    reflection = {"tags": [{"id": "b1", "tag": "helpful"}, {"id": "b1", "tag": "helpful"},
                           {"id": "b1", "tag": "helpful"}, {"id": 2, "tag": "harmful"},
                           {"id": "b99", "tag": "helpful"}, {"id": "b3", "tag": "meh"}]}
    ops = {"ops": [{"op": "edit", "id": "b2", "text": "Approve loans under 3000"}, {"op": "remove", "id": "b3"},
                   {"op": "add", "text": "Verify identity first!"}, {"op": "add", "text": "Escalate wires abroad"},
                   {"op": "edit", "id": "b42", "text": "ghost"}, {"op": "explode", "id": "b1"}]}
    model.reply = in_order(reflection, ops)
    await method.learn([record(5), record(6)])
    # b1: three helpful tags, capped at one per episode of a two-episode block; b2 edited: counters restart.
    assert bullets(method) == [(1, "Verify identity first", 2, 0), (2, "Approve loans under 3000", 0, 0),
                               (4, "Escalate wires abroad", 0, 0)]
    updated = {b["id"]: (b["added_at"], b["updated_at"]) for b in method.state()["bullets"]}
    assert updated == {1: (1, 1), 2: (1, 6), 4: (6, 6)}
    assert method.context(view(9, "x")).endswith("- [b4] (+0/-0) Escalate wires abroad")


async def test_harmful_bullets_are_pruned_and_the_size_cap_holds() -> None:
    method, model = await seeded("One", "Two", "Three")
    model.reply = in_order({"tags": [{"id": "b2", "tag": "harmful"}]}, {"ops": []},
                           {"tags": [{"id": "b2", "tag": "harmful"}]}, {"ops": []})
    await method.learn([record(2)])
    assert [b[0] for b in bullets(method)] == [1, 2, 3]
    await method.learn([record(3)])
    assert [b[0] for b in bullets(method)] == [1, 3]
    method.cap = 2
    model.reply = in_order({"tags": [{"id": "b3", "tag": "helpful"}]}, {"ops": [{"op": "add", "text": "Four"}]})
    await method.learn([record(4)])
    # Over the cap: lowest (helpful - harmful) first, then least recently updated: b1 goes.
    assert [b[0] for b in bullets(method)] == [3, 4]


async def test_malformed_replies_are_tolerated() -> None:
    method, model = await seeded("One")
    before, calls = method.state(), len(model.requests)
    model.reply = in_order("not json at all")
    await method.learn([record(2)])
    assert len(model.requests) == calls + 1 and method.state() == before
    model.reply = in_order({"tags": [{"id": "b1", "tag": "helpful"}]}, '{"ops": [{"op": "add"')
    await method.learn([record(3)])
    assert bullets(method) == [(1, "One", 1, 0)]

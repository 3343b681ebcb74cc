"""lessons: one call per episode with the record, at most three lessons stored, relevance and failures
in the context, a capped store, malformed replies ignored."""

from __future__ import annotations

from methods.lessons import SYSTEM, LessonsMethod
from methods.text import clip
from tests.methods.fakes import CannedModel, always, by_position, record, view


def lesson(title: str, do: str = "escalate it", when: str = "a refund is asked") -> dict[str, str]:
    return {"title": title, "when": when, "do": do}


async def test_each_episode_gets_one_method_call_with_its_record() -> None:
    model = CannedModel(always({"lessons": []}))
    method = LessonsMethod(model, "retail")
    records = [record(1, reward=0.0), record(2)]
    await method.learn(records)
    assert len(model.requests) == 2
    for request, r, outcome in zip(model.requests, records, ("failure", "success"), strict=True):
        assert request.purpose == "method" and request.tools == () and request.domain == "retail"
        assert request.system == SYSTEM
        assert request.messages[0].content == (f"Episode at stream position {r.position}, score {r.score}/100 "
                                               f"(a {outcome}):\n\n{clip(r.render(), 60_000)}")


async def test_at_most_three_lessons_per_episode_labelled_by_score_and_position() -> None:
    reply = {"lessons": [lesson(f"Lesson {name}", do=f"do {name}") for name in ("alpha", "beta", "gamma", "delta")]}
    method = LessonsMethod(CannedModel(always(reply)), "retail")
    await method.learn([record(7, reward=0.25)])
    stored = method.state()["lessons"]
    assert [s["title"] for s in stored] == ["Lesson alpha", "Lesson beta", "Lesson gamma"]
    assert {(s["outcome"], s["position"], s["score"]) for s in stored} == {("failure", 7, 25)}


async def test_context_shows_relevant_lessons_then_recent_failures() -> None:
    replies = {
        1: {"lessons": [lesson("Refunds need a manager", do="escalate refunds", when="refund requests")]},
        2: {"lessons": [lesson("Addresses change freely", do="update the address", when="address changes")]},
        3: {"lessons": [lesson("Exchanges are limited", do="check the exchange count", when="exchange requests")]},
    }
    method = LessonsMethod(CannedModel(by_position(replies)), "retail", relevant=1, recent_failures=1)
    await method.learn([record(1, reward=0.0), record(2, reward=1.0), record(3, reward=0.0)])
    context = method.context(view(9, "I want a refund for my order"))
    relevant, failures = context.split("### Recent failures")
    assert "[t=1, from a failure] Refunds need a manager. When: refund requests. Do: escalate refunds" in relevant
    assert "Exchanges are limited" in failures and "Refunds need" not in failures
    assert "Addresses change" not in context


async def test_store_is_capped_oldest_first_and_restatements_replace() -> None:
    replies = {p: {"lessons": [lesson(f"Rule number {p}", do=f"step {p}")]} for p in range(1, 8)}
    replies[8] = {"lessons": [lesson("Rule number 3", do="step 3")]}
    method = LessonsMethod(CannedModel(by_position(replies)), "retail", cap=4)
    await method.learn([record(p) for p in range(1, 8)])
    assert [s["title"] for s in method.state()["lessons"]] == [f"Rule number {p}" for p in (4, 5, 6, 7)]
    method = LessonsMethod(CannedModel(by_position(replies)), "retail", cap=10)
    await method.learn([record(p) for p in (3, 4, 8)])
    assert [(s["title"], s["position"]) for s in method.state()["lessons"]] == [
        ("Rule number 4", 4), ("Rule number 3", 8)]


async def test_malformed_replies_teach_nothing() -> None:
    replies = {1: "I cannot answer that.", 2: '{"lessons": [{"title": 3}, "x", {"title": "no do field"}]}',
               3: '{"lessons": [', 4: '[{"title": "Bare list", "do": "works too"}]'}
    method = LessonsMethod(CannedModel(by_position(replies)), "retail")
    await method.learn([record(p) for p in (1, 2, 3, 4)])
    assert [s["title"] for s in method.state()["lessons"]] == ["Bare list"]

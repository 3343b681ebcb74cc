"""The LLM pitch judge: what it asks, how it reads the verdict, and that a bad verdict is never a guess."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest

from runner.config.plan import Stream
from runner.display.progress import RunProgress
from runner.journal import open_journal
from runner.models.stack import ClientStack
from runner.providers.priority import SERVING, TEST
from runner.providers.taxonomy import ProviderError
from runner.schedule.judge import LLMJudge, judge_factory
from simulators.domain import JudgeItem, JudgeRequest
from simulators.model_api import ModelClient, ModelRequest, Purpose
from simulators.protocol import AssistantTurn
from tests.fakes import ScriptModel, offline_clients, toy_scenario

REQUEST = JudgeRequest(product="Halo Lamp (desk lamp)", pitch="A budget-friendly lamp that lasts.",
                       items=(JudgeItem("price", "budget-friendly price"), JudgeItem("buzz", "rarely talked about")))


def replying(text: str) -> ScriptModel:
    async def respond(request: ModelRequest) -> AssistantTurn:
        return AssistantTurn(text=text)

    return ScriptModel(respond, name="judge-model")


async def test_verdict_is_read_and_named_after_the_model() -> None:
    model = replying('Sure. {"labels": {"price": "mentioned", "buzz": "not_addressed"}, '
                     '"invented_claims": ["lasts forever"]}')
    verdict = await LLMJudge(model).assess(REQUEST)
    assert dict(verdict.labels) == {"price": "mentioned", "buzz": "not_addressed"}
    assert verdict.invented_claims == ("lasts forever",) and verdict.judge == "llm:judge-model"
    sent = model.requests[0]
    assert sent.purpose == "judge" and sent.tools == ()
    assert "price: budget-friendly price" in sent.messages[0].content and REQUEST.pitch in sent.messages[0].content


@pytest.mark.parametrize("reply", ["no json here", '{"labels": {"price": "mentioned"}}',
                                   '{"labels": {"price": "loved", "buzz": "mentioned"}}'])
async def test_an_unusable_verdict_is_an_infrastructure_failure(reply: str) -> None:
    with pytest.raises(ProviderError, match="no usable verdict"):
        await LLMJudge(replying(reply)).assess(REQUEST)


class PrioritiesSeen(ClientStack):
    """The client stack, keeping the priority each client was asked for."""

    asked: list[tuple[str, int]]

    def client(self, model: str, unit_id: str, stream_id: str, purpose: Purpose, priority: int,
               seed: int | None = None) -> ModelClient:
        self.asked = [*getattr(self, "asked", []), (purpose, priority)]
        return super().client(model, unit_id, stream_id, purpose, priority, seed)


async def test_a_serving_episodes_judge_calls_go_at_serving_priority(tmp_path: Path) -> None:
    scenario = replace(toy_scenario(windows=1, serving_per_window=1, test_per_window=1), domain="pitch")
    stream = Stream("script", "counting", scenario, scenario.serving, scenario.test)
    async with open_journal(tmp_path / "j.sqlite") as journal:
        progress = RunProgress(run_id="r", journal_path=str(journal.path))
        base = offline_clients(journal, progress, replying("{}"))
        clients = PrioritiesSeen(**{f.name: getattr(base, f.name) for f in fields(ClientStack)})
        judges = judge_factory("script", clients)
        assert judges(stream, "serving-unit", SERVING) is not None
        assert judges(stream, "test-unit", TEST) is not None
    assert clients.asked == [("judge", SERVING), ("judge", TEST)]

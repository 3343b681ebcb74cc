"""The LLM pitch judge: what it asks, how it reads the verdict, and that a bad verdict is never a guess."""

from __future__ import annotations

import pytest

from runner.errors import ProviderError
from runner.judge import LLMJudge
from simulators.domain import JudgeItem, JudgeRequest
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn
from tests.fakes import ScriptModel

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

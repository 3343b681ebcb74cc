"""The LLM judge for pitch: labels each rubric item through a model client, so its calls are priced,
budgeted and journaled as judge spend. Scoring stays in the pitch domain, identical for every judge."""

from __future__ import annotations

from collections.abc import Callable

from methods.llm_json import extract_json
from runner.config.plan import Stream
from runner.models.stack import ClientStack
from runner.providers.taxonomy import Failure, ProviderError
from simulators.domain import Judge, JudgeRequest, JudgeVerdict
from simulators.model_api import ModelClient, ModelRequest
from simulators.protocol import Message

__all__ = ["LABELS", "LLMJudge", "judge_factory", "judge_prompt"]

LABELS = ("mentioned", "contradicted", "not_addressed")

SYSTEM = (
    "You grade a sales pitch against a product sheet. For every sheet item decide whether the pitch "
    "states it (mentioned), states its opposite or something incompatible with it (contradicted), or does "
    "not bring it up (not_addressed). Then list every claim in the pitch that the sheet does not support "
    "(invented claims); the product's name and category are not claims. Reply with one JSON object: "
    '{"labels": {"<item id>": "mentioned" | "contradicted" | "not_addressed", ...}, '
    '"invented_claims": ["<claim>", ...]} and nothing else.'
)


def judge_prompt(request: JudgeRequest) -> str:
    items = "\n".join(f"- {item.attribute}: {item.fact}" for item in request.items)
    return f"Product: {request.product}\nSheet items (id: fact):\n{items}\n\nPitch:\n{request.pitch}"


class LLMJudge:
    def __init__(self, client: ModelClient, max_output_tokens: int = 2048) -> None:
        self._client = client
        self._max_output_tokens = max_output_tokens
        self.name = f"llm:{client.name}"

    async def assess(self, request: JudgeRequest) -> JudgeVerdict:
        reply = await self._client.respond(ModelRequest(
            system=SYSTEM, messages=(Message(role="user", content=judge_prompt(request)),),
            max_output_tokens=self._max_output_tokens, purpose="judge"))
        return self._verdict(request, reply.turn.text)

    def _verdict(self, request: JudgeRequest, text: str) -> JudgeVerdict:
        """A reply that is not a verdict for every item is an infrastructure failure: the episode is
        re-queued rather than scored on a guess."""
        value = extract_json(text)
        labels = value.get("labels") if isinstance(value, dict) else None
        wanted = [item.attribute for item in request.items]
        if not isinstance(labels, dict) or any(labels.get(a) not in LABELS for a in wanted):
            raise ProviderError(f"judge {self.name} gave no usable verdict for {request.product}",
                                failure=Failure.MALFORMED)
        claims = value.get("invented_claims", []) if isinstance(value, dict) else []
        invented = tuple(str(c) for c in claims) if isinstance(claims, list) else ()
        return JudgeVerdict(labels={a: str(labels[a]) for a in wanted}, invented_claims=invented, judge=self.name)


def judge_factory(judge_model: str, clients: ClientStack) -> Callable[[Stream, str, int], Judge | None]:
    """Per episode, the pitch judge: the domain's offline judge (None) unless a judge model is set, whose
    calls then go through the run's client stack as judge spend of that episode, at the episode's priority
    (a serving episode waits for its verdict before the stream learns and goes on)."""

    def offline(stream: Stream, unit_id: str, priority: int) -> Judge | None:
        return None

    def llm(stream: Stream, unit_id: str, priority: int) -> Judge | None:
        if stream.scenario.domain != "pitch":
            return None
        return LLMJudge(clients.client(judge_model, unit_id, stream.stream_id, "judge", priority))

    return llm if judge_model else offline

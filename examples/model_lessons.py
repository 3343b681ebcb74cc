"""A method that asks the stream's model for one lesson after each scored episode and keeps the
newest few: the smallest complete example of a method calling `setup.client` (docs/methods.md).

    shiftbench run --models MODEL --methods ./examples/model_lessons.py:LESSONS --pilot 2

Every call goes through the runner (from the method's worker, over its socket): rate-limited, priced,
capped by the budget, journaled, and answered from the journal on a resume. The offline `scripted`
model answers a method's calls with empty text, so offline this method keeps nothing; try it against
the project's mock server (`python -m bench.mock_server`, which answers "ok") or a real model.
"""

from __future__ import annotations

from collections.abc import Sequence

from methods.base import MethodSetup, MethodSpec
from methods.options import MethodOption
from simulators.model_api import ModelClient, ModelRequest
from simulators.protocol import JSON, Message, TaskView
from simulators.record import EpisodeRecord

SYSTEM = ("You coach a customer-service agent. Given one episode and its score out of 100, write one "
          "short lesson (one sentence) the agent should follow next time.")


class ModelLessons:
    def __init__(self, client: ModelClient, domain: str, keep: int) -> None:
        self.client, self.domain, self.keep = client, domain, keep
        self.lessons: list[str] = []

    def context(self, task: TaskView) -> str:
        if not self.lessons:
            return ""
        return "Lessons from earlier customers:\n" + "\n".join(f"- {lesson}" for lesson in self.lessons)

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        for record in records:
            request = ModelRequest(system=SYSTEM, purpose="method", domain=self.domain, max_output_tokens=200,
                                   messages=(Message("user", f"{record.render()}\nScore: {record.score}/100."),))
            reply = await self.client.respond(request)
            lesson = " ".join(reply.turn.text.split())[:300]
            if lesson:  # the offline scripted model answers a method with empty text
                self.lessons = [*self.lessons, lesson][-self.keep:]

    def state(self) -> JSON:
        return {"lessons": list(self.lessons)}

    def load(self, state: JSON) -> None:
        assert isinstance(state, dict) and isinstance(state["lessons"], list)
        self.lessons = [str(lesson) for lesson in state["lessons"]]


def _build(setup: MethodSetup) -> ModelLessons:
    if setup.client is None:
        raise ValueError("model_lessons calls a model: its spec says uses_model=True")
    keep = setup.options.get("keep", 5)
    assert isinstance(keep, int)
    return ModelLessons(setup.client, setup.domain, keep)


LESSONS = MethodSpec("model_lessons", "asks the model for a lesson per episode, keeps the newest",
                     uses_model=True, build=_build, options=(MethodOption("keep", int, 5),))

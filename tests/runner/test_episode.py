"""The acting agent's loop, as FORMAT.md specifies it."""

from __future__ import annotations

from runner.schedule.episode import EpisodeLimits, run_episode
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn
from simulators.session import MAX_TOOL_CALLS
from tests.fakes import ScriptModel, ToyDomain, call, toy_decider, toy_scenario

SCENARIO = toy_scenario()
TASK = SCENARIO.serving[0]  # window 0: gold decision "yes"
CASE = TASK.evaluator.metadata["case_id"]


def script(*turns: AssistantTurn) -> ScriptModel:
    queue = list(turns)

    async def respond(request: ModelRequest) -> AssistantTurn:
        return queue.pop(0) if queue else AssistantTurn(tool_calls=(call("finish", {}, "last"),))

    return ScriptModel(respond)


async def test_correct_decision_then_finish_scores_one() -> None:
    model = ScriptModel(toy_decider(lambda r: "yes"))
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model)
    assert result.grade.reward == 1.0
    assert result.record.end_reason == "finished"
    assert result.turns == 2 and result.tool_calls == 1
    assert result.record.render().endswith("Score: 100/100.")


async def test_several_calls_in_one_turn_execute_none_and_answer_each() -> None:
    both = AssistantTurn(tool_calls=(call("decide", {"case_id": CASE, "decision": "yes"}, "a"),
                                     call("finish", {}, "b")))
    model = script(both)
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model)
    second_request = model.requests[1]
    answers = [m for m in second_request.messages if m.role == "tool"]
    assert [m.tool_call_id for m in answers] == ["a", "b"]
    assert all("not executed" in m.content for m in answers)
    # Nothing was decided, so the final finish fails the grade.
    assert result.grade.reward == 0.0
    assert result.record.steps[0].action_name is None


async def test_turn_without_call_gets_corrective_user_message() -> None:
    model = script(AssistantTurn(text="Let me think."),
                   AssistantTurn(tool_calls=(call("decide", {"case_id": CASE, "decision": "yes"}),)))
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model)
    corrective = model.requests[1].messages[-1]
    assert corrective.role == "user" and "Act with exactly ONE tool call" in corrective.content
    assert result.grade.reward == 1.0


async def test_reasoning_is_passed_back_on_later_turns() -> None:
    model = script(AssistantTurn(reasoning="case looks fine",
                                 tool_calls=(call("decide", {"case_id": CASE, "decision": "yes"}),)))
    await run_episode(TASK, SCENARIO.environment, ToyDomain(), model)
    assistant = [m for m in model.requests[1].messages if m.role == "assistant"]
    assert assistant[0].reasoning == "case looks fine"


async def test_malformed_arguments_and_unknown_tool_are_not_executed() -> None:
    model = script(AssistantTurn(tool_calls=(call("decide", "{not json", "x"),)),
                   AssistantTurn(tool_calls=(call("teleport", {}, "y"),)))
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model)
    observations = [s.observation for s in result.record.steps]
    assert observations[0].startswith("not executed: arguments must be a JSON object that follows the tool's "
                                      "schema (invalid JSON: Expecting property name")
    assert observations[1] == "not executed: unknown tool 'teleport'."
    assert result.tool_calls == 0


async def test_rejected_finish_is_an_ordinary_tool_error() -> None:
    model = script(AssistantTurn(tool_calls=(call("finish", "[1, 2]"),)),
                   AssistantTurn(tool_calls=(call("decide", {"case_id": CASE, "decision": "yes"}),)))
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model)
    assert "must be a JSON object" in result.record.steps[0].observation
    assert result.record.end_reason == "finished" and result.grade.reward == 1.0


async def test_turn_limit_ends_the_episode_unfinished() -> None:
    model = script(*[AssistantTurn(text="hmm")] * 10)
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model, limits=EpisodeLimits(max_turns=5))
    assert result.turns == 5 and result.record.end_reason == "turn_limit"
    assert result.grade.reward == 0.0


async def test_output_token_budget_ends_the_episode() -> None:
    model = script(*[AssistantTurn(text="hmm")] * 10)  # 5 output tokens a call
    limits = EpisodeLimits(max_output_tokens=12)
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model, limits=limits)
    assert result.record.end_reason == "output_token_limit" and result.turns == 3
    assert model.requests[-1].max_output_tokens == 2


async def test_tool_budget_then_finish_still_allowed() -> None:
    lookups = [AssistantTurn(tool_calls=(call("read_docs", {"doc": "policy"}, f"r{i}"),))
               for i in range(MAX_TOOL_CALLS + 1)]
    model = script(*lookups, AssistantTurn(tool_calls=(call("finish", {}),)))
    result = await run_episode(TASK, SCENARIO.environment, ToyDomain(), model)
    assert result.tool_calls == MAX_TOOL_CALLS
    assert result.record.steps[MAX_TOOL_CALLS].observation.startswith("Error: tool-call budget (50) exhausted")
    assert result.record.end_reason == "finished"


async def test_method_context_is_appended_to_the_system_prompt() -> None:
    model = ScriptModel(toy_decider(lambda r: "yes"))
    await run_episode(TASK, SCENARIO.environment, ToyDomain(), model, method_context="LEARNED: say yes")
    # Its own field right after the system prompt (a cache breakpoint of its own on Anthropic); one text
    # for providers that take a single system prompt.
    assert model.requests[0].system == SCENARIO.environment.system_prompt
    assert model.requests[0].context == "LEARNED: say yes"
    assert model.requests[0].full_system.startswith("You decide cases.")
    assert model.requests[0].full_system.rstrip().endswith("LEARNED: say yes")
    assert "evaluator" not in model.requests[0].messages[0].content

"""The record a reference-interface method reads is byte for byte the reference's format.

The expected texts below were written out by hand from the ServeLearnBench reference's
`servelearnbench/protocol.py` (`episode_record`, `score_line`, `split_reply`) over the trace its
`servelearnbench/agent.py` (`run_turns`) would keep for the same episode: the step kinds `tool`,
`finish`, `invalid` with `(no_action)`, `(multi_action)` / `(finish_with_tool)`, `(schema_invalid)`,
`(unknown_tool)`, and `capped` with `(step_cap)` / `(token_cap)`; a `received:` line only where the
model got neither the instruction nor the previous observation; no observation line where the
trace's observation is empty (a turn with no call, an accepted finish); arguments re-encoded by
`json.dumps(args, ensure_ascii=False)`; the score line `Score: {reward * 100:g}/100.`.
"""

from __future__ import annotations

from methods.slb.record import EpisodeResult, episode_result, reference_record
from runner.schedule.episode import NO_CALL_MESSAGE
from simulators.protocol import TaskView
from simulators.record import EpisodeRecord, Step

TOOLS = frozenset({"get_order_details", "cancel_pending_order", "read_docs"})
INSTRUCTION = "Current timestamp: 7\n\nCancel order #W1, please."
MULTI = ("not executed: 2 tool calls were received in one turn; only ONE call per turn is allowed. Nothing was "
         "executed — re-issue the calls one per turn.")


def view() -> TaskView:
    return TaskView(task_id="rt_1", scenario="retail_l1", domain="retail", tier="L1", timestamp=7,
                    instruction=INSTRUCTION)


def every_kind_of_step() -> EpisodeRecord:
    steps = (
        Step("Read the policy.", "", "read_docs", '{"doc":"policy"}', "# Policy\nCancel pending orders."),
        Step("", "<think>Which order?</think>Let me check.", None, "", NO_CALL_MESSAGE, "no tool call"),
        Step("", "", None, "", MULTI, "2 calls in one turn", ("get_order_details", "finish")),
        Step("", "", "get_order_details", '{"order_id": ', "Error: arguments must be a JSON object"),
        Step("", "", "refund_everything", "{}", "Error: unknown tool 'refund_everything'"),
        Step("Order is pending.", "", "get_order_details", '{"order_id":"#W1"}', '{"status": "pending"}'),
        Step("", "", "finish", '{"answer":1}', "not executed: finish takes no argument named 'answer'."),
        Step("Done.", "Cancelled.", "finish", '{"decision":"refuse","reason":"café"}', '{"accepted": true}'),
    )
    return EpisodeRecord(task=view(), position=7, steps=steps, reward=1.0,
                         finish_arguments={"decision": "refuse", "reason": "café"}, end_reason="finished")


EXPECTED = f"""INSTRUCTION: {INSTRUCTION}

[step 1]
  thought: Read the policy.
  action: read_docs({{"doc": "policy"}})
  observation: # Policy
Cancel pending orders.

[step 2]
  thought: Which order?
  replied: Let me check.
  action: NONE [invalid: (no_action)]

[step 3]
  received: {NO_CALL_MESSAGE}
  action: NONE [invalid: (finish_with_tool)]
  observation: {MULTI}

[step 4]
  action: NONE [invalid: (schema_invalid)]
  observation: Error: arguments must be a JSON object

[step 5]
  action: NONE [invalid: (unknown_tool)]
  observation: Error: unknown tool 'refund_everything'

[step 6]
  thought: Order is pending.
  action: get_order_details({{"order_id": "#W1"}})
  observation: {{"status": "pending"}}

[step 7]
  action: finish({{"answer": 1}})
  observation: not executed: finish takes no argument named 'answer'.

[step 8]
  thought: Done.
  replied: Cancelled.
  action: finish({{"decision": "refuse", "reason": "café"}})

Score: 100/100."""


def test_every_step_kind_renders_as_the_reference_renders_it() -> None:
    assert reference_record(every_kind_of_step(), TOOLS) == EXPECTED


def test_a_turn_limit_ends_with_the_step_cap_and_a_continuous_reward_keeps_its_digits() -> None:
    steps = (Step("", "", None, "", NO_CALL_MESSAGE, "no tool call"),
             Step("", "", None, "", NO_CALL_MESSAGE, "no tool call"))
    record = EpisodeRecord(task=view(), position=7, steps=steps, reward=0.7354, finish_arguments=None,
                           end_reason="turn_limit")
    assert reference_record(record, TOOLS) == f"""INSTRUCTION: {INSTRUCTION}

[step 1]
  action: NONE [invalid: (no_action)]

[step 2]
  received: {NO_CALL_MESSAGE}
  action: NONE [invalid: (no_action)]

[step 3]
  received: {NO_CALL_MESSAGE}
  action: NONE [capped: (step_cap)]
  observation: episode reached the step cap (2 turns) without finish

Score: 73.54/100."""


def test_the_output_token_cap_is_a_capped_step_after_the_last_turn() -> None:
    steps = (Step("", "", "read_docs", '{"doc": "policy"}', "# Policy"),)
    record = EpisodeRecord(task=view(), position=7, steps=steps, reward=0.0, finish_arguments=None,
                           end_reason="output_token_limit")
    assert reference_record(record, TOOLS).endswith(
        "[step 2]\n  action: NONE [capped: (token_cap)]\n  observation: task exceeded 256000 output tokens\n\n"
        "Score: 0/100.")


def test_the_episode_result_carries_the_reference_fields() -> None:
    result = episode_result(every_kind_of_step(), TOOLS)
    assert result == EpisodeResult(task_id="rt_1", instruction=INSTRUCTION, timestamp=7, reward=1.0, record=EXPECTED)

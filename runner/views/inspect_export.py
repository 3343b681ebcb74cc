"""`shiftbench export RUN_ID --format inspect --out DIR`: one Inspect evaluation log per stream.

Written with Inspect's own log API (`inspect_ai.log`, the `inspect` extra), so `inspect view --log-dir
DIR` shows every episode the way researchers read Inspect evaluations: a sample per episode (serving and
test), its messages (the task, each turn's reasoning and tool call, the observation as the tool's
answer), its score (the reward, 0 to 1, explained by the grader's details) and its metadata (phase,
window, category, tokens, cost, latency). The log's headline metric is the mean test reward; the task
is the scenario, the solver the learning method.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import orjson
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    write_eval_log_async,
)
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall

from runner.common.files import output_folder
from runner.config.plan import replica_label
from runner.journal import EpisodeFilter, RunRow, read_only
from runner.views.episodes import require_run
from runner.views.export import EVERY_STREAM, selected_streams, stream_transcripts
from runner.views.transcript import Transcript, json_text
from simulators.record import Step

__all__ = ["SCORER", "export_inspect"]

SCORER = "shiftbench"


async def export_inspect(path: Path, run_id: str, out: Path, flag: str = "--out",
                         where: EpisodeFilter = EVERY_STREAM) -> list[tuple[Path, int]]:
    """Write one `.eval` log per stream `where` selects into `out` (made if absent; the logs appear only
    when all are written); returns each file with its sample count."""
    written = []
    with output_folder(out, flag) as folder:
        async with read_only(path) as reader:
            run = await require_run(reader, path, run_id)
            for stream in await selected_streams(reader, run_id, where):
                transcripts = await stream_transcripts(reader, run_id, stream)
                replica = f"_{replica_label(stream.replica)}" if stream.replica else ""
                name = f"{run_id}_{_slug(stream.model)}_{stream.method}_{stream.scenario}{replica}.eval"
                await write_eval_log_async(_log(run, stream.model, stream.method, stream.scenario, transcripts),
                                           str(folder.file(name)))
                written.append((out / name, len(transcripts)))
    return written


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in text)


def _log(run: RunRow, model: str, method: str, scenario: str, transcripts: Sequence[Transcript]) -> EvalLog:
    created = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(run.created_at))
    spec = EvalSpec(
        created=created, run_id=run.run_id, task=f"shiftbench/{scenario}", model=model, solver=method,
        dataset=EvalDataset(name=scenario, samples=len(transcripts)), config=EvalConfig(),
        metadata={"shiftbench_run": run.run_id, "method": method, "scenario": scenario,
                  "config_hash": run.config_hash, "dataset_fingerprint": run.dataset_fingerprint,
                  "code_version": run.code_version})
    tests = [t.row.reward for t in transcripts if t.row.phase == "test"]
    metrics = {"mean_test_reward": EvalMetric(name="mean_test_reward", value=sum(tests) / len(tests) if tests else 0.0)}
    results = EvalResults(total_samples=len(transcripts), completed_samples=len(transcripts),
                          scores=[EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)])
    # A run stopped before its end (interrupted, budget) is still in progress to Inspect: resumable.
    return EvalLog(eval=spec, status="success" if run.status == "completed" else "started", results=results,
                   samples=[_sample(t) for t in transcripts])


def _sample(t: Transcript) -> EvalSample:
    e = t.row  # the journaled episode
    messages = _messages(t)
    final = t.finish or (t.record.steps[-1].reply if t.record.steps else "")
    return EvalSample(
        id=f"{e.phase}/{e.task_id}", epoch=1, input=t.record.task.instruction, target="",
        messages=messages, output=ModelOutput.from_content(model=e.model, content=final),
        scores={SCORER: Score(value=e.reward, answer=t.finish or None, explanation=json_text(t.grade_details),
                              metadata={"judge": e.judge, "score_line": t.score_line})},
        metadata={"unit_id": e.unit_id, "phase": e.phase, "window": e.window, "category": e.category,
                  "turns": e.turns, "tool_calls": e.tool_calls, "input_tokens": e.input_tokens,
                  "output_tokens": e.output_tokens, "cost_usd": e.cost_usd, "latency_s": e.latency_s,
                  "end_reason": e.end_reason})


def _messages(t: Transcript) -> list[ChatMessage]:
    messages: list[ChatMessage] = [ChatMessageUser(content=t.record.task.instruction)]
    for number, step in enumerate(t.record.steps, start=1):
        messages += _turn(number, step)
    return messages


def _turn(number: int, step: Step) -> list[ChatMessage]:
    text = "\n\n".join(part for part in (step.reasoning, step.reply) if part)
    if step.action_name is None:
        note = f"[no tool call: {step.note}]" if step.note else ""
        return [ChatMessageAssistant(content="\n\n".join(p for p in (text, note) if p) or "(no reply)"),
                ChatMessageUser(content=step.observation)]
    call_id = f"call_{number}"
    call = ToolCall(id=call_id, function=step.action_name, arguments=_arguments(step.action_arguments))
    return [ChatMessageAssistant(content=text, tool_calls=[call]),
            ChatMessageTool(content=step.observation, tool_call_id=call_id, function=step.action_name)]


def _arguments(raw: str) -> dict[str, object]:
    """The call's arguments as the model wrote them: a JSON object when it is one, else kept whole."""
    try:
        parsed = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        return {"raw": raw}
    return parsed if isinstance(parsed, dict) else {"value": parsed}

"""A request ends as its worker's failure, whatever is in flight: its time limit cuts the link (a timer,
not a cancel scope) and the request fails with the limit named, the worker stopped, even when a model
call the method made is answered after the cut; a worker killed while its model call is out fails the
request as killed (before, the call's answer to the dead link ended the request with an ExceptionGroup
that was no method's failure)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from methods.base import PublicScenario
from runner.workers.failure import MethodFailure
from runner.workers.handle import MethodLimits, WorkerPlan, open_worker_method
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn, Evaluator, Task
from simulators.record import EpisodeRecord
from tests.fakes import ScriptModel

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "model_lessons.py"
PUBLIC = PublicScenario("retail_l1", "retail", "l1", "You are a retail agent.", {"policy.md": "Be kind."}, ())
TASK = Task("t1", "retail_l1", "retail", "l1", "serving", 1, 1, "fully_specified", "Return order 1234, please.",
            Evaluator("s", "f", (), None, {}))


def lessons_plan() -> WorkerPlan:
    return WorkerPlan(f"{EXAMPLE}:LESSONS", {}, "lessons", reads=(str(EXAMPLE.parent),))


async def test_a_model_call_answered_after_the_limit_cut_the_link_fails_the_learn_as_the_limit() -> None:
    cut = anyio.Event()

    async def answer_once_cut(request: ModelRequest) -> AssistantTurn:
        await cut.wait()  # the limit has cut the link: this answer has no one to go to
        return AssistantTurn(text="a lesson too late")

    client = ScriptModel(answer_once_cut)
    handle = await open_worker_method(lessons_plan(), "retail_l1", "retail", PUBLIC, client, MethodLimits(learn_s=0.5))
    link = handle.worker.frames
    abort = link.abort

    def abort_and_tell() -> None:
        abort()
        cut.set()

    link.abort = abort_and_tell  # type: ignore[method-assign]
    record = EpisodeRecord(TASK.view(), 1, (), 1.0, None, "finish")
    with pytest.raises(MethodFailure) as failed:
        await handle.learn([record])
    assert "took longer than its limit of 0.5 s" in failed.value.error
    assert cut.is_set() and len(client.requests) == 1
    assert not handle.worker.process.is_alive()
    with pytest.raises(MethodFailure, match="limit of 0.5 s"):  # the worker is gone: later requests say why
        await handle.contexts([TASK])
    await handle.close()


async def test_a_worker_killed_while_its_model_call_is_out_fails_the_learn_as_killed() -> None:
    handles = []

    async def kill_then_answer(request: ModelRequest) -> AssistantTurn:
        worker = handles[0].worker
        os.kill(worker.process.pid, signal.SIGKILL)  # as the kernel's OOM killer would
        while worker.frames._ended is None:  # every loop turn: answer as soon as the runner sees the end,
            await anyio.lowlevel.checkpoint()  # while it still waits for the dead worker's exit code
        return AssistantTurn(text="a lesson for no one")

    client = ScriptModel(kill_then_answer)
    handles.append(await open_worker_method(lessons_plan(), "retail_l1", "retail", PUBLIC, client, MethodLimits()))
    with pytest.raises(MethodFailure) as failed:
        await handles[0].learn([EpisodeRecord(TASK.view(), 1, (), 1.0, None, "finish")])
    assert "killed by SIGKILL" in failed.value.error and len(client.requests) == 1
    await handles[0].close()

"""A method instance as the engine drives it, wherever it runs: `contexts`, `learn`, `state`, `load`,
`copy`, `close`, all awaited, all failing the same way (`MethodFailure`).

`WorkerMethod` is an instance in a worker process (`process`); `InProcessMethod` one in the runner's
own process (shiftbench's methods, `--methods-in-process` for a debugger). Both refuse a state that is
not JSON (naming the key path and type) and a call past its time limit (`MethodLimits`; in the
runner's process the limit is judged when the call returns, since nothing can interrupt it there);
both let the runner's own failures (`passthrough`: the budget, a provider, the journal) through as
themselves, so a budget stop in a method's model call is a budget stop, not the method's error.
Both note the seconds each `context` and each `learn` took (`MethodTimes`, shared by an instance and
its copies): a context's as the method itself spent it, a learn's from request to reply (its model
calls included, as the stream waited on them).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import orjson

from methods.base import Labelled, Method, PublicScenario
from runner.workers.boundary import PROCESS_ONLY
from runner.workers.failure import MethodFailure, describe_exception, json_problem
from runner.workers.in_process_guard import InProcessTimeLimit, guarded_call
from runner.workers.limits import MethodLimits, over_size
from runner.workers.process import Worker, start_worker
from simulators.model_api import ModelClient
from simulators.protocol import JSON, Task
from simulators.record import EpisodeRecord

__all__ = ["InProcessMethod", "MethodHandle", "MethodLimits", "MethodTimes", "WorkerMethod", "WorkerPlan",
           "open_worker_method"]


@dataclass
class MethodTimes:
    """Seconds per call of one stream's method, in the order they were made."""

    context_s: list[float] = field(default_factory=list)
    learn_s: list[float] = field(default_factory=list)
    boundary: str = ""
    """The boundary the stream's method ran under (`in-process`, `process only`, a Landlock ABI)."""


@dataclass(frozen=True)
class WorkerPlan:
    """How to build a method in a worker: the spec and options it resolves from, the folders it may read."""

    spec: str
    options: Mapping[str, JSON]
    name: str
    reads: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    """Names of environment variables the worker gets beside the worker environment (`--method-env`)."""


class MethodHandle(Protocol):
    boundary: str
    """`in-process`, `process only`, or the kernel's boundary the worker runs under."""
    times: MethodTimes

    @property
    def labelled(self) -> bool:
        """Whether its contexts are asked with the task's phase and window (the reference's adapter)."""

    async def contexts(self, tasks: Sequence[Task]) -> list[str]: ...

    async def learn(self, records: Sequence[EpisodeRecord]) -> None: ...

    async def learn_then_contexts(self, records: Sequence[EpisodeRecord], tasks: Sequence[Task]) -> list[str]:
        """`learn`, then `contexts` of `tasks`: one round trip to a worker instead of two."""

    async def state(self) -> JSON: ...

    async def load(self, state: JSON) -> None: ...

    async def copy(self) -> MethodHandle: ...

    async def close(self) -> None: ...


def _over(call: str, seconds: float, limit: float) -> None:
    if seconds > limit:
        raise MethodFailure(call, f"took {seconds:.1f} s, past its limit of {limit:g} s")


def _sized(call: str, what: str, size: int, limit_mb: float) -> None:
    error = over_size(what, size, limit_mb)
    if error is not None:
        raise MethodFailure(call, error)


def _state_size(value: JSON) -> int:
    return len(orjson.dumps(value))


def _own_failure(call: str, exc: BaseException, limit_s: float) -> BaseException:
    """A method's exception in the runner's process as its failure; the runner's cancellation as itself."""
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return exc
    if isinstance(exc, InProcessTimeLimit):
        return _past_limit(call, limit_s)
    return describe_exception(call, exc)


def _past_limit(call: str, limit_s: float) -> MethodFailure:
    flag = "--method-context-limit" if call == "context" else "--method-learn-limit"
    return MethodFailure(call, f"took longer than its limit of {limit_s:g} s (stopped in the runner's process; {flag} "
                               "raises it)")


@dataclass
class InProcessMethod:
    method: Method
    limits: MethodLimits
    passthrough: tuple[type[BaseException], ...] = ()
    boundary: str = "in-process"
    times: MethodTimes = field(default_factory=MethodTimes)

    @property
    def labelled(self) -> bool:
        return isinstance(self.method, Labelled)

    async def contexts(self, tasks: Sequence[Task]) -> list[str]:
        texts = []
        for task in tasks:
            started = time.perf_counter()
            try:
                with guarded_call(self.limits.context_s, timed=True):
                    if isinstance(self.method, Labelled):
                        text = self.method.labelled_context(task.view(), task.split, task.window)
                    else:
                        text = self.method.context(task.view())
            except BaseException as exc:  # the method's (SystemExit and KeyboardInterrupt too)
                raise _own_failure("context", exc, self.limits.context_s) from None
            seconds = time.perf_counter() - started
            self.times.context_s.append(seconds)
            _over("context", seconds, self.limits.context_s)
            if isinstance(text, str):
                _sized("context", "context", len(text.encode()), self.limits.context_mb)
            texts.append(text)
        return texts

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        started = time.perf_counter()
        try:
            with guarded_call(self.limits.learn_s, timed=False), anyio.move_on_after(self.limits.learn_s) as scope:
                await self.method.learn(records)
        except self.passthrough:
            raise
        except BaseException as exc:
            raise _own_failure("learn", exc, self.limits.learn_s) from None
        if scope.cancelled_caught:
            raise _past_limit("learn", self.limits.learn_s)
        seconds = time.perf_counter() - started
        self.times.learn_s.append(seconds)
        _over("learn", seconds, self.limits.learn_s)

    async def learn_then_contexts(self, records: Sequence[EpisodeRecord], tasks: Sequence[Task]) -> list[str]:
        await self.learn(records)
        return await self.contexts(tasks)

    async def state(self) -> JSON:
        try:
            with guarded_call(self.limits.learn_s, timed=True):
                value = self.method.state()
        except BaseException as exc:
            raise _own_failure("state", exc, self.limits.learn_s) from None
        problem = json_problem(value)
        if problem is not None:
            raise MethodFailure("state", f"state() is not JSON: {problem}")
        _sized("state", "state", _state_size(value), self.limits.state_mb)
        return value

    async def load(self, state: JSON) -> None:
        try:
            with guarded_call(self.limits.learn_s, timed=True):
                self.method.load(state)
        except BaseException as exc:
            raise _own_failure("load", exc, self.limits.learn_s) from None

    async def copy(self) -> MethodHandle:
        try:
            twin = copy.deepcopy(self.method)
        except Exception as exc:
            raise describe_exception("copy", exc) from None
        return InProcessMethod(twin, self.limits, self.passthrough, times=self.times)

    async def close(self) -> None:
        return None


@dataclass
class WorkerMethod:
    worker: Worker
    instance: int
    labelled: bool
    limits: MethodLimits
    owns: bool = True
    """The first instance owns its worker (closing it ends the process); a copy only drops itself."""
    boundary: str = PROCESS_ONLY
    times: MethodTimes = field(default_factory=MethodTimes)

    async def contexts(self, tasks: Sequence[Task]) -> list[str]:
        if not tasks:
            return []
        reply = await self.worker.request("context", {"op": "contexts", "instance": self.instance,
                                                      "tasks": self._sent(tasks)},
                                          self.limits.context_s * len(tasks))
        return self._texts(reply)

    def _sent(self, tasks: Sequence[Task]) -> list[dict[str, Any]]:
        # A view's fields are flat (str, int): its __dict__ is what asdict would build, without asdict's
        # recursive copy (the largest runner-side cost of a serving round trip in a profile).
        if self.labelled:
            return [{**vars(task.view()), "labels": [task.split, task.window]} for task in tasks]
        return [vars(task.view()) for task in tasks]

    def _texts(self, reply: Mapping[str, Any]) -> list[str]:
        for seconds in reply["seconds"]:
            self.times.context_s.append(float(seconds))
            _over("context", float(seconds), self.limits.context_s)
        texts = [str(text) for text in reply["contexts"]]
        for text in texts:
            _sized("context", "context", len(text.encode()), self.limits.context_mb)
        return texts

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        started = time.perf_counter()
        await self.worker.request("learn", {"op": "learn", "instance": self.instance, "records": list(records)},
                                  self.limits.learn_s)
        self.times.learn_s.append(time.perf_counter() - started)

    async def learn_then_contexts(self, records: Sequence[EpisodeRecord], tasks: Sequence[Task]) -> list[str]:
        if not tasks:
            await self.learn(records)
            return []
        reply = await self.worker.request("learn", {"op": "learn", "instance": self.instance, "records": list(records),
                                                    "then_contexts": self._sent(tasks)},
                                          self.limits.learn_s + self.limits.context_s * len(tasks))
        self.times.learn_s.append(float(reply["learn_s"]))
        _over("learn", float(reply["learn_s"]), self.limits.learn_s)
        return self._texts(reply)

    async def state(self) -> JSON:
        value: JSON = await self.worker.request("state", {"op": "state", "instance": self.instance},
                                                self.limits.learn_s)
        _sized("state", "state", _state_size(value), self.limits.state_mb)
        return value

    async def load(self, state: JSON) -> None:
        await self.worker.request("load", {"op": "load", "instance": self.instance, "state": state},
                                  self.limits.learn_s)

    async def copy(self) -> MethodHandle:
        number = await self.worker.request("copy", {"op": "copy", "instance": self.instance}, self.limits.learn_s)
        return WorkerMethod(self.worker, int(number), self.labelled, self.limits, owns=False, boundary=self.boundary,
                            times=self.times)

    async def close(self) -> None:
        if self.owns:
            await self.worker.close()
            return
        try:
            await self.worker.request("drop", {"op": "drop", "instance": self.instance}, self.limits.learn_s)
        except MethodFailure:
            pass  # its worker is gone already: nothing left to drop


async def open_worker_method(plan: WorkerPlan, scenario: str, domain: str, public: PublicScenario,
                             client: ModelClient | None, limits: MethodLimits,
                             times: MethodTimes | None = None) -> WorkerMethod:
    """A fresh instance of `plan`'s method in a worker of its own (a failed build ends the worker)."""
    worker = await start_worker(plan.reads, client, limits, plan.env)
    setup: dict[str, Any] = {"scenario": scenario, "domain": domain, "public": public,
                             "model": client.name if client is not None else ""}
    try:
        built = await worker.request("build", {"op": "build", "spec": plan.spec, "options": dict(plan.options),
                                               "name": plan.name, "setup": setup}, limits.learn_s)
    except BaseException:
        await worker.close()
        raise
    return WorkerMethod(worker, 0, bool(built["labelled"]), limits, boundary=str(built.get("boundary", PROCESS_ONLY)),
                        times=times if times is not None else MethodTimes())

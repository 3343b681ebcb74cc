"""The worker process: one method's instances, served over frames, and nothing of the runner in reach.

It starts with the socket to the runner and an empty scratch folder (its working directory, where its
output goes too), restricts itself where the kernel allows (`boundary`), and only then imports the
method's code, when the runner sends `build`. From then on it answers one request at a time: `contexts`,
`learn` (then the next block's contexts, when asked), `state`, `load`, `copy` (a deep copy kept beside
the first instance, for a method without JSON state), `drop`, `exit`. A method's model calls go back
over the same socket (`call` frames) and wait for the runner's answer, so every paid call passes the
runner's client stack. Any exception of the method's is an `error` reply naming its own frame; the
process itself never dies of one.
"""

from __future__ import annotations

import asyncio
import copy
import faulthandler
import inspect
import itertools
import os
import socket
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from methods.base import Labelled, Method, MethodSetup
from runner.workers import import_guard
from runner.workers.boundary import restrict
from runner.workers.confine import confine
from runner.workers.failure import MethodFailure, describe_exception, json_problem
from runner.workers.limits import over_size
from runner.workers.wire import decode_response, encode, public_from, read_frame, record_from, view_from, write_frame
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelRequest, ModelResponse

__all__ = ["ModelCallRefused", "run_forked"]


class ModelCallRefused(Exception):
    """The runner did not answer a model call (the budget ran out, the provider failed): the runner
    stops the call's learn itself, whatever the method does with this."""


class ProxyClient:
    """`setup.client` in a worker: each call a frame to the runner, the answer a frame back."""

    def __init__(self, name: str, child: Child) -> None:
        self._name, self._child = name, child

    @property
    def name(self) -> str:
        return self._name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return await self._child.call(request)


class Child:
    def __init__(self, writer: asyncio.StreamWriter, boundary: str) -> None:
        self.writer, self.boundary = writer, boundary
        self.instances: dict[int, Method] = {}
        self.labelled = False
        self._ids = itertools.count(1)
        self._calls: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def call(self, request: ModelRequest) -> ModelResponse:
        number = next(self._ids)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._calls[number] = answer
        await write_frame(self.writer, {"call": number, "request": request})
        reply = await answer
        if "refused" in reply:
            raise ModelCallRefused(str(reply["refused"]))
        return decode_response(reply["response"])

    def answered(self, message: Mapping[str, Any]) -> None:
        waiting = self._calls.pop(int(message["answer"]), None)
        if waiting is not None and not waiting.done():
            waiting.set_result(dict(message))

    # -------------------------------------------------------------------------------------- requests

    async def handle(self, message: Mapping[str, Any]) -> Any:
        op = str(message["op"])
        if op == "build":
            return self.build(message)
        if op == "resolve":
            return resolution(message)
        method = self.instances[int(message.get("instance", 0))]
        if op == "contexts":
            return self.contexts(method, message["tasks"])
        if op == "learn":
            started = time.perf_counter()
            await method.learn([record_from(r) for r in message["records"]])
            if "then_contexts" not in message:
                return None
            # The next block's contexts in the same round trip (the runner asks so only when nothing is
            # asked in between: no checkpoint, no stop): half the round trips of a serving stream.
            learned = time.perf_counter() - started
            last_words.call = "context"
            return {**self.contexts(method, message["then_contexts"]), "learn_s": learned}
        if op == "state":
            return checked_state(method, last_words.state_mb)
        if op == "load":
            method.load(message["state"])
            return None
        if op == "copy":
            number = max(self.instances) + 1
            self.instances[number] = copy.deepcopy(method)
            return number
        if op == "drop":
            self.instances.pop(int(message["instance"]), None)
            return None
        raise ValueError(f"unknown request {op!r}")

    def build(self, message: Mapping[str, Any]) -> dict[str, Any]:
        from methods.spec import resolve_method  # imports the method's code: only now, inside the boundary

        resolved = resolve_method(str(message["spec"]), message.get("options") or {}, "worker", str(message["name"]))
        spec = resolved.spec
        setup_data = message["setup"]
        client = ProxyClient(str(setup_data["model"]), self) if spec.uses_model else None
        setup = MethodSetup(scenario=str(setup_data["scenario"]), domain=str(setup_data["domain"]), client=client,
                            public=public_from(setup_data["public"]))
        self.instances[0] = spec.build(setup)
        self.labelled = isinstance(self.instances[0], Labelled)
        return {"labelled": self.labelled, "snapshot": spec.snapshot, "pid": os.getpid(), "boundary": self.boundary}

    def contexts(self, method: Method, tasks: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
        texts, seconds = [], []
        for task in tasks:
            view = view_from(task)
            started = time.perf_counter()
            if self.labelled and isinstance(method, Labelled) and "labels" in task:
                split, window = task["labels"]
                text = method.labelled_context(view, str(split), int(window))
            else:
                text = method.context(view)
            seconds.append(time.perf_counter() - started)
            if not isinstance(text, str):
                raise TypeError(f"context returned a {type(text).__name__}, not a str")
            error = over_size("context", len(text.encode()), last_words.context_mb) if last_words.context_mb else None
            if error is not None:
                raise MethodFailure("context", error)
            texts.append(text)
        return {"contexts": texts, "seconds": seconds}


def resolution(message: Mapping[str, Any]) -> dict[str, Any]:
    """A `resolve` request's answer: the spec's flags, its checked options and its source, by value (the
    runner never imports the method's code), or the one-line refusal a resolution in the runner gives."""
    from methods.spec import resolve_method  # imports the method's code: only here, inside the boundary

    try:
        resolved = resolve_method(str(message["spec"]), message.get("options") or {}, str(message["where"]),
                                  message.get("name"))
    except ShiftbenchInputError as exc:
        return {"refused": str(exc)}
    spec = resolved.spec
    return {"name": resolved.name, "summary": spec.summary, "uses_model": spec.uses_model, "learns": spec.learns,
            "sees_bulletin": spec.sees_bulletin, "block_size": spec.block_size, "snapshot": spec.snapshot,
            "options": dict(resolved.options), "source": resolved.source.to_json()}


def checked_state(method: Method, limit_mb: float = 0.0) -> Any:
    """`method.state()`, refused with the key path and type where it is not JSON, and past `limit_mb`
    (measured here, so a state too large never crosses the socket)."""
    value = method.state()
    problem = json_problem(value)
    if problem is not None:
        raise MethodFailure("state", f"state() is not JSON: {problem}", _defined_at(type(method).state))
    error = over_size("state", len(orjson.dumps(value)), limit_mb) if limit_mb else None
    if error is not None:
        raise MethodFailure("state", error, _defined_at(type(method).state))
    return value


def _defined_at(function: object) -> str:
    try:
        lines = inspect.getsourcelines(function)  # type: ignore[arg-type]
        return f"{inspect.getsourcefile(function)}:{lines[1]} in state"  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


_CALL_OF = {"contexts": "context"}


async def _serve(sock: socket.socket, boundary: str) -> None:
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    child = Child(writer, boundary)
    last_words.writer = writer
    requests: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def read_all() -> None:
        try:
            while True:
                message = await read_frame(reader)
                if "answer" in message:
                    child.answered(message)
                else:
                    requests.put_nowait(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            requests.put_nowait(None)  # the runner went: nothing left to serve

    reading = asyncio.create_task(read_all())
    while (message := await requests.get()) is not None and message.get("op") != "exit":
        op = str(message.get("op"))
        last_words.call = _CALL_OF.get(op, op)
        try:
            reply: dict[str, Any] = {"reply": message.get("id"), "ok": await child.handle(message)}
        except MethodFailure as failure:
            reply = {"reply": message.get("id"), "error": failure.to_json()}
        except BaseException as exc:  # noqa: BLE001 - the method's (SystemExit and KeyboardInterrupt too):
            # its stream's failure, told, never this process's end
            reply = {"reply": message.get("id"), "error": described(last_words.call, exc).to_json()}
        try:
            await write_frame(writer, reply)
        except TypeError as exc:  # a reply orjson cannot write (an integer past 64 bits in a state)
            unwritable = MethodFailure(_CALL_OF.get(op, op), f"its answer is not JSON: {exc}")
            await write_frame(writer, {"reply": message.get("id"), "error": unwritable.to_json()})
    reading.cancel()
    writer.close()


def described(call: str, exc: BaseException) -> MethodFailure:
    """A method's exception as its failure; past the worker's memory limit, the line says which flag."""
    failure = describe_exception(call, exc)
    if isinstance(exc, MemoryError) and last_words.memory:
        note = f" (past the worker's memory limit of {last_words.memory >> 20:,} MB: --method-memory raises it)"
        failure = replace(failure, error=failure.error + note)
    return failure


class _LastWords:
    """What the worker says when it is ended from inside (`os._exit`, a SystemExit out of the loop):
    one frame on its socket before it goes, so the runner names the call and the method's own line."""

    def __init__(self) -> None:
        self.writer: asyncio.StreamWriter | None = None
        self.call = "build"
        self.memory = 0
        self.state_mb = self.context_mb = 0.0
        self.exit = os._exit

    def say(self, failure: MethodFailure) -> None:
        writer = self.writer
        if writer is None or writer.transport.get_write_buffer_size():
            return  # a frame half sent: another now would garble both; the runner tells the exit code
        try:
            sock = writer.get_extra_info("socket")
            frame = encode({"last_words": failure.to_json()})
            os.set_blocking(sock.fileno(), True)
            os.write(sock.fileno(), frame)
        except (OSError, TypeError, ValueError, AttributeError):
            pass

    def os_exit(self, code: int) -> None:
        frame = sys._getframe(1)
        where = f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        self.say(MethodFailure(self.call, f"os._exit({code}) ended its worker", where))
        self.exit(code)


last_words = _LastWords()


def run_forked(fd: int, request: Mapping[str, Any]) -> None:
    """The worker's entry, forked from the fork server (`zygote`) with its socket on `fd` and its output
    on stdout and stderr: its environment, its limits, its boundary; then it serves until told to exit."""
    scratch = str(request["scratch"])
    os.environ.clear()
    os.environ.update({**request["env"], "HOME": scratch, "TMPDIR": scratch})
    tempfile.tempdir = scratch  # the only folder it may write
    os.chdir(scratch)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - the method reads nothing from the runner's terminal
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - line by line into output.log
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    faulthandler.enable(sys.stderr)  # a crash in C says where
    last_words.memory = int(request["memory"])
    last_words.state_mb, last_words.context_mb = float(request["state_mb"]), float(request["context_mb"])
    confine(int(request["memory"]))
    boundary = restrict(scratch, tuple(request["reads"]))
    os._exit = last_words.os_exit  # type: ignore[assignment]
    import_guard.install()
    sock = socket.socket(fileno=fd)
    try:
        asyncio.run(_serve(sock, boundary))
    except BaseException as exc:  # noqa: BLE001 - out of the loop (a method's task): said, then the end
        last_words.say(described(last_words.call, exc))
        raise

"""A worker process as the runner holds it: started, asked one request at a time, ended.

Started by `multiprocessing` (forkserver with the worker's modules preloaded by default, measured in
bench/README.md; `SHIFTBENCH_WORKER_START=spawn` to compare) with one end of a socketpair. A request
is a frame and its reply; while it waits, the method's model calls arrive as `call` frames and are
answered through the runner's client (`answer`), each in a task of its own. The request's time limit
covers the whole exchange: past it, the process is killed and the call is the method's failure. A
worker that goes (an exit, a signal, the kernel's OOM killer) fails the call it was serving, and every
later one, with what ended it.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from runner.workers.child import main as child_main
from runner.workers.failure import MethodFailure
from runner.workers.wire import FrameError, FrameStream, decode_request
from simulators.model_api import ModelClient

__all__ = ["START_METHOD", "Worker", "start_worker"]

START_METHOD = os.environ.get("SHIFTBENCH_WORKER_START", "forkserver")
EXIT_WAIT_S = 5.0
"""How long a worker asked to exit may take before it is killed."""


def _context() -> Any:
    """The multiprocessing context (typed Any: typeshed's BaseContext has no `Process`)."""
    context = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        # "__main__" too: the server imports the main script once (under its guard), so no worker runs
        # it again (multiprocessing would, in every child: `shiftbench` is runner.cli, 0.2 s each).
        context.set_forkserver_preload(["__main__", "runner.workers.child", "methods.spec"])
    return context


@dataclass
class _Refusal:
    """A runner-side failure of a proxied model call (the budget, a provider): re-raised as itself."""

    error: BaseException | None = None


@dataclass
class Worker:
    process: Any
    frames: FrameStream
    scratch: str
    client: ModelClient | None = None
    _lock: anyio.Lock = field(default_factory=anyio.Lock)
    _next: int = 0
    _gone: MethodFailure | None = None

    async def request(self, call: str, message: Mapping[str, Any], limit_s: float) -> Any:
        """The reply's value; a `MethodFailure` for the method's exception, its worker's end or the limit."""
        async with self._lock:
            if self._gone is not None:
                raise self._gone
            self._next += 1
            refusal, reply, failure = _Refusal(), None, None
            async with anyio.create_task_group() as calls:
                try:
                    with anyio.fail_after(limit_s):
                        await self.frames.send({**message, "id": self._next})
                        reply = await self._reply(calls, refusal)
                except TimeoutError:
                    failure = MethodFailure(call, f"took longer than its limit of {limit_s:g} s (the worker was "
                                                  "stopped)")
                    await self.kill(failure)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, FrameError, OSError):
                    failure = await self._died(call)
                calls.cancel_scope.cancel()
        if refusal.error is not None:
            raise refusal.error
        if failure is not None:
            raise failure
        assert reply is not None
        if "error" in reply:
            raise MethodFailure.from_json(reply["error"])
        return reply.get("ok")

    async def _reply(self, calls: anyio.abc.TaskGroup, refusal: _Refusal) -> dict[str, Any]:
        while True:
            frame = await self.frames.receive()
            if "call" in frame:
                calls.start_soon(self._answer, frame, refusal)
            elif frame.get("reply") == self._next:
                return frame

    async def _answer(self, frame: Mapping[str, Any], refusal: _Refusal) -> None:
        number = frame["call"]
        if self.client is None:
            await self.frames.send({"answer": number, "refused": "this method's spec says uses_model=False: "
                                                                   "it has no client"})
            return
        try:
            response = await self.client.respond(decode_request(frame["request"]))
        except Exception as exc:  # the runner's (budget, provider, journal): it stops the learn, as itself
            refusal.error = refusal.error or exc
            await self.frames.send({"answer": number, "refused": str(exc)})
            return
        await self.frames.send({"answer": number, "response": response})

    async def _died(self, call: str) -> MethodFailure:
        await anyio.to_thread.run_sync(self.process.join, EXIT_WAIT_S)
        code = self.process.exitcode
        if code is None:
            what = "its worker stopped answering"
        elif code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            hint = " (out of memory?)" if -code == signal.SIGKILL else ""
            what = f"its worker was killed by {name}{hint}"
        else:
            what = f"its worker exited with code {code}"
        failure = MethodFailure(call, f"{what}; its output: {os.path.join(self.scratch, 'output.log')}")
        await self.kill(failure)
        return failure

    async def kill(self, failure: MethodFailure | None = None) -> None:
        self._gone = self._gone or failure or MethodFailure("worker", "the worker was closed")
        if self.process.is_alive():
            self.process.kill()
        await anyio.to_thread.run_sync(self.process.join, EXIT_WAIT_S)
        await self.frames.aclose()

    async def close(self) -> None:
        """Ask it to exit; kill it when it does not. Its scratch folder goes unless the method failed
        (then its output stays for the author to read)."""
        with anyio.CancelScope(shield=True):
            if self._gone is None:
                try:
                    with anyio.fail_after(EXIT_WAIT_S):
                        await self.frames.send({"op": "exit"})
                except (TimeoutError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass
                await anyio.to_thread.run_sync(self.process.join, EXIT_WAIT_S)
                await self.kill()
                shutil.rmtree(self.scratch, ignore_errors=True)
            elif self.process.is_alive():
                await self.kill()


async def start_worker(reads: Sequence[str], client: ModelClient | None) -> Worker:
    """A worker process, running, its boundary in place, no method built yet."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    scratch = tempfile.mkdtemp(prefix="shiftbench-worker-")
    process = _context().Process(target=child_main, args=(theirs, scratch, tuple(reads)), name="shiftbench-method",
                                 daemon=True)  # never outlives the runner, even one that fails
    try:
        await anyio.to_thread.run_sync(process.start)
    finally:
        theirs.close()
    stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
    return Worker(process, FrameStream(stream), scratch, client)

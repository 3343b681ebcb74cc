"""A worker process as the runner holds it: started, asked one request at a time, ended.

Forked by the workers' fork server (`spawner`, `zygote`) with one end of a socketpair, an environment
of named variables only and its limits. A request is a frame and its reply; while it waits, the
method's model calls arrive as `call` frames and are answered through the runner's client (`answer`),
each in a task of its own. The request's time limit covers the whole exchange: past it, the process is
killed and the call is the method's failure. A worker that goes (an exit, a signal, the kernel's OOM
killer, its output limit) fails the call it was serving, and every later one, with what ended it: the
call, the method's own line where the worker said it (`os._exit`, an exception out of its loop), and
the last lines of its output.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from runner.workers.environment import worker_environment
from runner.workers.failure import MethodFailure
from runner.workers.frame_link import FrameLink, open_link
from runner.workers.limits import MethodLimits
from runner.workers.spawner import WorkerProcess, spawn
from runner.workers.wire import FrameError, decode_request
from simulators.model_api import ModelClient

__all__ = ["OUTPUT_TAIL", "Worker", "output_tail", "start_worker"]

EXIT_WAIT_S = 5.0
"""How long a worker asked to exit may take before it is killed."""
OUTPUT_TAIL = 2000
"""The most of a failed worker's last output kept with its failure (and journaled)."""


def output_tail(path: str | Path, limit: int = OUTPUT_TAIL, lines: int = 20) -> str:
    """The last `lines` lines of a worker's output, at most `limit` characters ("" when none)."""
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - 4 * limit))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])[-limit:]


@dataclass
class _Refusal:
    """A runner-side failure of a proxied model call (the budget, a provider): re-raised as itself."""

    error: BaseException | None = None


@dataclass
class Worker:
    process: WorkerProcess
    frames: FrameLink
    folder: str
    """Its own folder: `scratch/` (the only place it may write) and `output.log` (written by the server)."""
    client: ModelClient | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One request at a time. asyncio's: anyio's yields to the loop on every acquire, even a free one,
    and a request already yields at its send and its reply."""
    _next: int = 0
    _gone: MethodFailure | None = None
    _last_words: MethodFailure | None = None

    @property
    def output(self) -> str:
        return os.path.join(self.folder, "output.log")

    async def request(self, call: str, message: Mapping[str, Any], limit_s: float) -> Any:
        """The reply's value; a `MethodFailure` for the method's exception, its worker's end or the limit."""
        async with self._lock:
            if self._gone is not None:
                raise self._gone
            self._next += 1
            refusal = _Refusal()
            if self.client is None:  # no model calls to answer alongside: no task group to pay for
                reply, failure = await self._exchange(call, message, limit_s, None, refusal)
            else:
                async with anyio.create_task_group() as calls:
                    reply, failure = await self._exchange(call, message, limit_s, calls, refusal)
                    calls.cancel_scope.cancel()
        if refusal.error is not None:
            raise refusal.error
        if failure is not None:
            raise failure
        assert reply is not None
        if "error" in reply:
            raise self.with_output(MethodFailure.from_json(reply["error"]))
        return reply.get("ok")

    async def _exchange(self, call: str, message: Mapping[str, Any], limit_s: float,
                        calls: anyio.abc.TaskGroup | None,
                        refusal: _Refusal) -> tuple[dict[str, Any] | None, MethodFailure | None]:
        """(the reply, None) or (None, why there is none): the request sent and answered within `limit_s`.

        The limit is a timer that cuts the link, not a cancel scope: a worker past its limit is stopped
        anyway, and a scope around each of a sweep's ~5,000 learns cost the runner a third of a round
        trip's time (bench/README.md, "A timer for the limit")."""
        late = False

        def time_up() -> None:
            nonlocal late
            late = True
            self.frames.abort()  # what waits on the link (the send, the reply) ends now

        timer = self.frames.loop.call_later(limit_s, time_up)
        reply: dict[str, Any] | None = None
        try:
            await self.frames.send({**message, "id": self._next})
            reply = await self._reply(calls, refusal)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, FrameError, OSError):
            pass
        finally:
            timer.cancel()
        if late:  # a reply that came with the limit passed is not taken: the link is cut already
            failure = MethodFailure(call, f"took longer than its limit of {limit_s:g} s (the worker was "
                                          "stopped; --method-learn-limit or --method-context-limit raises it)")
            await self.kill(failure)
            return None, failure
        if reply is None:
            return None, await self._died(call)
        return reply, None

    def with_output(self, failure: MethodFailure) -> MethodFailure:
        """`failure` with the last lines the method printed, for its author to read in `show`."""
        return failure if failure.output else replace(failure, output=output_tail(self.output))

    async def _reply(self, calls: anyio.abc.TaskGroup | None, refusal: _Refusal) -> dict[str, Any]:
        while True:
            frame = await self.frames.receive()
            if "call" in frame:
                if calls is None:
                    await self._answer(frame, refusal)  # refused at once: there is no client
                else:
                    calls.start_soon(self._answer, frame, refusal)
            elif "last_words" in frame:
                self._last_words = MethodFailure.from_json(frame["last_words"])
            elif frame.get("reply") == self._next:
                return frame

    async def _answer(self, frame: Mapping[str, Any], refusal: _Refusal) -> None:
        number = frame["call"]
        if self.client is None:
            await self._send_answer({"answer": number, "refused": "this method's spec says uses_model=False: "
                                                                  "it has no client"})
            return
        try:
            response = await self.client.respond(decode_request(frame["request"]))
        except Exception as exc:  # the runner's (budget, provider, journal): it stops the learn, as itself
            refusal.error = refusal.error or exc
            await self._send_answer({"answer": number, "refused": str(exc)})
            return
        await self._send_answer({"answer": number, "response": response})

    async def _send_answer(self, answer: Mapping[str, Any]) -> None:
        """An answer for a worker already gone (its limit cut the link, it died) is dropped: the request
        it belonged to says why it failed, and the call itself is journaled as any other."""
        try:
            await self.frames.send(answer)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass

    async def _died(self, call: str) -> MethodFailure:
        await anyio.to_thread.run_sync(self.process.join, EXIT_WAIT_S)
        what = self._ending()
        if self._last_words is not None:
            said = self._last_words
            failure = replace(said, error=f"{said.error}; {what}" if "os._exit" not in said.error else said.error)
        else:
            failure = MethodFailure(call, what)
        failure = replace(self.with_output(failure), error=f"{failure.error} (its output: {self.output})")
        await self.kill(failure)
        return failure

    def _ending(self) -> str:
        code = self.process.exitcode
        if self.process.output_limit:
            return (f"its output passed the limit of {self.process.output_limit / 1e6:g} MB (the worker was stopped; "
                    "--method-output-size raises it)")
        if code is None:
            return "its worker stopped answering"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            hint = " (out of memory?)" if -code == signal.SIGKILL else ""
            return f"its worker was killed by {name}{hint}"
        return f"its worker exited with code {code}"

    async def kill(self, failure: MethodFailure | None = None) -> None:
        self._gone = self._gone or failure or MethodFailure("worker", "the worker was closed")
        self.process.kill()
        await anyio.to_thread.run_sync(self.process.join, EXIT_WAIT_S)
        await self.frames.aclose()

    async def close(self) -> None:
        """Ask it to exit; kill it when it does not. Its folder goes unless the method failed (then its
        output stays for the author to read)."""
        with anyio.CancelScope(shield=True):
            if self._gone is None:
                try:
                    with anyio.fail_after(EXIT_WAIT_S):
                        await self.frames.send({"op": "exit"})
                except (TimeoutError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass
                await anyio.to_thread.run_sync(self.process.join, EXIT_WAIT_S)
                await self.kill()
                shutil.rmtree(self.folder, ignore_errors=True)
            elif self.process.is_alive():
                await self.kill()


async def start_worker(reads: Sequence[str], client: ModelClient | None, limits: MethodLimits | None = None,
                       env: Sequence[str] = ()) -> Worker:
    """A worker process, running, its boundary in place, no method built yet. `env`: the names of
    variables it gets beside the worker environment's own (`--method-env`)."""
    limits = limits or MethodLimits()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    folder = tempfile.mkdtemp(prefix="shiftbench-worker-")
    scratch = os.path.join(folder, "scratch")
    os.mkdir(scratch, 0o700)
    request = {"scratch": scratch, "output": os.path.join(folder, "output.log"), "reads": list(reads),
               "env": worker_environment(env), "memory": limits.memory_bytes, "output_limit": limits.output_bytes,
               "state_mb": limits.state_mb, "context_mb": limits.context_mb}
    try:
        process = await anyio.to_thread.run_sync(spawn, request, theirs.fileno())
    except BaseException:
        ours.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        theirs.close()
    return Worker(process, await open_link(ours), folder, client)

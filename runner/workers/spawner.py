"""The runner's side of the workers' fork server (`zygote`): start it once, ask it for workers.

The server is a new interpreter started with the worker environment only (no API key crosses), its
own session (the terminal's Ctrl-C is the runner's), and the runner's import path, holding one end of
a control socket. It ends when that socket closes: when the runner exits, is killed (a kill -9 too: the
kernel closes the socket), or forks a child that is not a worker (the child's copy is closed at the
fork, so only the runner's own end keeps the server alive). A request is answered in milliseconds, so
requests are serialized with a lock and made from a thread (`anyio.to_thread`).
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import orjson

from runner.workers.environment import worker_environment

__all__ = ["WorkerProcess", "WorkerStartError", "spawn", "stop_server"]

_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
         "from runner.workers.zygote import main; main(int(sys.argv[2]))")


class WorkerStartError(RuntimeError):
    """The fork server could not start a worker (it ended, the system refused a process)."""


@dataclass
class WorkerProcess:
    """A worker as the runner holds it: its pid, a pidfd to signal exactly it, the pipe its status
    (exit code or signal, from the server that reaps it) arrives on."""

    pid: int
    pidfd: int | None
    status_fd: int
    exitcode: int | None = None
    """None while it runs; the exit code, or minus the signal that ended it."""
    output_limit: int = 0
    """The output limit it passed (so the server stopped it), else 0."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def is_alive(self) -> bool:
        self.join(0)
        return self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        with self._lock:
            if self.exitcode is not None:
                return
            ready, _, _ = select.select([self.status_fd], [], [], timeout)
            if ready:
                self._read_status()

    def _read_status(self) -> None:
        try:
            told: dict[str, Any] = orjson.loads(os.read(self.status_fd, 4096) or b"{}")
        except (OSError, orjson.JSONDecodeError):
            told = {}
        # nothing told: the server itself went, and its workers with it (PR_SET_PDEATHSIG)
        self.exitcode = int(told["code"]) if "code" in told else -int(told.get("signal", signal.SIGKILL))
        self.output_limit = int(told.get("output_limit", 0))
        os.close(self.status_fd)
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None

    def kill(self) -> None:
        with self._lock:
            if self.exitcode is not None:
                return
            try:
                if self.pidfd is not None:
                    signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
                else:
                    os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it ended on its own; its status is on the way


class _Server:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        path = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT, orjson.dumps(path).decode(), str(theirs.fileno())],
                env=worker_environment(), pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, start_new_session=True, cwd="/")
        except OSError as exc:
            ours.close()
            raise WorkerStartError(f"the workers' fork server could not start: {exc}") from None
        finally:
            theirs.close()
        self.control = ours

    def spawn(self, request: dict[str, Any], fds: list[int]) -> tuple[int, int | None]:
        try:
            socket.send_fds(self.control, [orjson.dumps(request)], fds)
            message, passed, _, _ = socket.recv_fds(self.control, 1 << 16, 1)
        except OSError as exc:
            raise WorkerStartError(f"the workers' fork server is gone ({exc})") from None
        if not message:
            raise WorkerStartError("the workers' fork server is gone (it ended)")
        reply = orjson.loads(message)
        if "error" in reply:
            raise WorkerStartError(f"the workers' fork server could not start a worker: {reply['error']}")
        return int(reply["pid"]), (passed[0] if passed else None)

    def stop(self) -> None:
        self.control.close()
        try:
            self.process.wait(5.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_lock = threading.Lock()
_server: _Server | None = None


def spawn(request: dict[str, Any], worker_fd: int) -> WorkerProcess:
    """A worker forked by the server for `request`, its socket end `worker_fd` (blocking: call it from a
    thread). A server that has gone is started anew, once."""
    global _server
    status_r, status_w = os.pipe()
    try:
        with _lock:
            for attempt in (1, 2):
                if _server is None:
                    _server = _Server()
                try:
                    pid, pidfd = _server.spawn(request, [worker_fd, status_w])
                    break
                except WorkerStartError:
                    _server.control.close()
                    _server = None
                    if attempt == 2:
                        raise
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    return WorkerProcess(pid, pidfd, status_r)


def stop_server() -> None:
    """End the fork server, and every worker with it."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None


def _forget_in_child() -> None:
    """A fork of the runner must not hold the control socket (the server would outlive the runner)."""
    global _server, _lock
    _lock = threading.Lock()
    if _server is not None:
        _server.control.close()
        _server = None


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(stop_server)

"""The fork server workers start from: a clean process of its own, outside every worker's boundary.

The runner starts it once (`runner.workers.spawner`) as a new interpreter with the worker environment
only (`environment`: no API key is ever in its memory), in a session of its own (a Ctrl-C at the
terminal is the runner's to handle, not a method's KeyboardInterrupt), with the method face and the
worker's own modules loaded and frozen out of the garbage collector, so a fork shares those pages with
every worker. It then serves one control socket:
- a request (JSON, with the worker's socket end and a status pipe passed as file descriptors) forks a
  worker; the reply is its pid and a pidfd, so the runner signals exactly that process;
- each worker's output (stdout, stderr) is a pipe it drains into the worker's `output.log`, up to the
  worker's output limit: past it the worker is killed and its status says why;
- a worker that ends is reaped and its status (exit code or signal) written to its status pipe;
- when the control socket closes (the runner ended, however: a kill -9 too), every worker is killed and
  the server exits. Each worker also dies with the server (PR_SET_PDEATHSIG), and a worker cannot start a
  process of its own (`seccomp`), so nothing of a run outlives it.
"""

from __future__ import annotations

import errno
import gc
import os
import selectors
import signal
import socket
import sys
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["main"]

_MAX_MESSAGE = 1 << 20
_EXIT = os._exit
"""Kept before any fork: a worker replaces `os._exit` with one that names its caller."""
_CHUNK = 1 << 16


@dataclass
class _Running:
    pid: int
    status_fd: int
    output_fd: int | None
    log_fd: int
    limit: int
    written: int = 0
    over: bool = False


class _Server:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.selector = selectors.DefaultSelector()
        self.running: dict[int, _Running] = {}
        self.by_output: dict[int, _Running] = {}
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector.register(control, selectors.EVENT_READ, "control")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "child")

    def serve(self) -> None:
        while True:
            for key, _ in self.selector.select():
                if key.data == "control":
                    if not self.request():
                        self.stop_all()
                        return
                elif key.data == "child":
                    self.drain_wake()
                    self.reap()
                else:
                    self.pump(key.data)

    # ----------------------------------------------------------------------------------- requests

    def request(self) -> bool:
        try:
            message, fds, _, _ = socket.recv_fds(self.control, _MAX_MESSAGE, 4)
        except (ConnectionError, OSError):
            return False
        if not message:
            return False
        try:
            reply, pidfd = self.spawn(orjson.loads(message), fds)
        except Exception as exc:  # the server never dies of one request: the runner reads why
            for fd in fds:
                _close(fd)
            reply, pidfd = {"error": f"{type(exc).__name__}: {exc}"}, None
        try:
            socket.send_fds(self.control, [orjson.dumps(reply)], [pidfd] if pidfd is not None else [])
        except OSError:
            return False
        finally:
            if pidfd is not None:
                os.close(pidfd)
        return True

    def spawn(self, request: dict[str, Any], fds: list[int]) -> tuple[dict[str, Any], int | None]:
        worker_fd, status_fd = fds
        log_fd = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            self.in_child(worker_fd, out_w, request)  # never returns
        os.close(worker_fd)
        os.close(out_w)
        os.set_blocking(out_r, False)
        running = _Running(pid, status_fd, out_r, log_fd, int(request["output_limit"]))
        self.running[pid] = running
        self.by_output[out_r] = running
        self.selector.register(out_r, selectors.EVENT_READ, out_r)
        pidfd = _pidfd(pid)
        return {"pid": pid}, pidfd

    def in_child(self, worker_fd: int, out_w: int, request: dict[str, Any]) -> None:
        code = 70
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.dup2(worker_fd, 3)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.closerange(4, _fd_ceiling())  # the control socket, other workers' pipes: none of its business
            from runner.workers.child import run_forked

            run_forked(3, request)
            code = 0
        except BaseException:  # noqa: BLE001 - the worker's last words go to its output, then it ends
            try:
                import traceback

                traceback.print_exc()
                sys.stderr.flush()
            finally:
                code = 70
        finally:
            _EXIT(code)

    # ------------------------------------------------------------------------------------- output

    def pump(self, fd: int) -> bool:
        """Move what the worker wrote to its log; False when there was nothing to read right now."""
        running = self.by_output.get(fd)
        if running is None:
            return False
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self.forget_output(running)
            return True
        self.keep(running, chunk)
        return True

    def keep(self, running: _Running, chunk: bytes) -> None:
        if running.over:
            return
        room = running.limit - running.written
        if len(chunk) > room:
            _write_all(running.log_fd, chunk[:max(room, 0)])
            _write_all(running.log_fd, f"\n[shiftbench: the method's output passed its limit of {running.limit:,} "
                                       "bytes; the worker was stopped]\n".encode())
            running.over = True
            _kill(running.pid)
            return
        _write_all(running.log_fd, chunk)
        running.written += len(chunk)

    def forget_output(self, running: _Running) -> None:
        if running.output_fd is None:
            return
        self.selector.unregister(running.output_fd)
        self.by_output.pop(running.output_fd, None)
        os.close(running.output_fd)
        running.output_fd = None

    # -------------------------------------------------------------------------------------- reaping

    def drain_wake(self) -> None:
        try:
            while os.read(self.wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            running = self.running.pop(pid, None)
            if running is not None:
                self.finish(running, status)

    def finish(self, running: _Running, status: int) -> None:
        while running.output_fd is not None:  # what it wrote before it ended is kept
            if not self.pump(running.output_fd):
                self.forget_output(running)  # nothing more, yet no end: nobody else may write there
        os.close(running.log_fd)
        told: dict[str, Any] = ({"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status)
                                else {"code": os.waitstatus_to_exitcode(status)})
        if running.over:
            told["output_limit"] = running.limit
        try:
            os.write(running.status_fd, orjson.dumps(told))
        except OSError:
            pass  # the runner no longer waits for it
        os.close(running.status_fd)

    def stop_all(self) -> None:
        for running in self.running.values():
            _kill(running.pid)
        for pid in list(self.running):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None  # an old kernel: the runner signals by pid (this server reaps, so the pid is not reused early)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            return  # a full disk: the output is lost, the worker is not


def _fd_ceiling() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 1 << 20)
    except (ValueError, OSError):
        return 4096


def main(control_fd: int) -> None:
    control = socket.socket(fileno=control_fd)
    import methods.face
    import runner.workers.child  # noqa: F401 - loaded once here, shared by every worker

    methods.face.preload()
    gc.collect()
    gc.freeze()  # the loaded modules' objects stay out of every worker's collections: their pages stay shared
    _Server(control).serve()


if __name__ == "__main__":
    main(int(sys.argv[1]))

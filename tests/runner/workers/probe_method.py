"""A method that tries every way out a hostile guest would, and says in its context what each gave:
`name: OK ...` or `name: ExceptionType ...`. Where to aim comes from the options (a UDP port, a unix
socket's path, a file to read, a folder to write), so a test knows what a success would look like."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from methods.base import MethodSetup, MethodSpec
from methods.options import MethodOption
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord


def _udp(port: int) -> object:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        return sock.sendto(os.environ.get("OPENAI_API_KEY", "no key").encode(), ("127.0.0.1", port))


def _unix(path: str) -> object:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        return sock.send(b"hello")


def _fork() -> object:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _read(path: str) -> object:
    with open(path) as source:
        return source.read(10)


def _write(folder: str) -> object:
    with open(os.path.join(folder, "planted.pth"), "w") as out:
        return out.write("import os\n")


class Probe:
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options

    def tries(self) -> dict[str, Callable[[], object]]:
        o = self.options
        return {"udp": lambda: _udp(int(o["udp_port"])), "unix": lambda: _unix(str(o["unix_path"])),
                "dns": lambda: socket.getaddrinfo("leak.shiftbench.invalid", 53),
                "tcp": lambda: socket.create_connection(("127.0.0.1", int(o["tcp_port"])), timeout=5).close(),
                "fork": _fork, "subprocess": lambda: subprocess.run(["true"], check=False).returncode,
                "read": lambda: _read(str(o["read_path"])),
                "write": lambda: _write(str(o["write_dir"])),
                "import": lambda: __import__("simulators.domains.retail.generator"),
                "keys": lambda: sorted(k for k in os.environ if "KEY" in k or "TOKEN" in k) or "none"}

    def context(self, task: TaskView) -> str:
        lines = [f"environment: {','.join(sorted(os.environ))}"]
        for name, attempt in self.tries().items():
            try:
                lines.append(f"{name}: OK {attempt()!r}")
            except BaseException as exc:  # noqa: BLE001 - each refusal is what the test reads
                lines.append(f"{name}: {type(exc).__name__} {exc}")
        lines.append(f"modules: {sorted(m for m in sys.modules if m.split('.')[0] == 'simulators')}")
        return "\n".join(lines)

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        return None

    def state(self) -> JSON:
        return {}

    def load(self, state: JSON) -> None:
        return None


def _build(setup: MethodSetup) -> Probe:
    return Probe(dict(setup.options))


_OPTIONS = tuple(MethodOption(name, str, "", f"the probe's {name}") for name in
                 ("udp_port", "unix_path", "tcp_port", "read_path", "write_dir"))
PROBE = MethodSpec("probe", "tries every way out", uses_model=False, build=_build, options=_OPTIONS)

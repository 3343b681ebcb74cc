"""Every way out a hostile guest tries, through a real worker (`probe_method.PROBE`), against real
listeners of the test's own: UDP, a unix socket on disk, DNS, TCP, a fork, a program, a file outside
its reach (a key in HOME), a write into the venv, an import of a generator, the API keys in its
environment. Each is refused in the worker; the same probe in the test's own process gets through
(so each refusal is the boundary's, not the probe's mistake)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import anyio
import pytest

from methods.base import PublicScenario
from runner.workers.boundary import landlock_abi
from runner.workers.handle import MethodLimits, WorkerPlan, open_worker_method
from simulators.protocol import Evaluator, Task
from tests.runner.workers import probe_method

PROBE_FILE = Path(probe_method.__file__).resolve()
TASK = Task("t1", "retail_l1", "retail", "l1", "serving", 1, 1, "fully_specified", "Return order 1234.",
            Evaluator("s", "f", (), None, {}))
PUBLIC = PublicScenario("retail_l1", "retail", "l1", "You are a retail agent.", {"policy.md": "x"}, ())
SECRET = "sk-test-0123456789"

pytestmark = pytest.mark.skipif(landlock_abi() < 4 or not sys.platform.startswith("linux"),
                                reason="needs Linux with Landlock network rules (ABI 4+)")


def outcomes(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines())


async def probe_in_worker(options: dict[str, str]) -> str:
    plan = WorkerPlan(f"{PROBE_FILE}:PROBE", options, "probe", reads=(str(PROBE_FILE),))
    handle = await open_worker_method(plan, "retail_l1", "retail", PUBLIC, None, MethodLimits())
    try:
        return (await handle.contexts([TASK]))[0]
    finally:
        await handle.close()


def test_every_channel_out_of_a_worker_is_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    home_key = tmp_path / "home" / ".ssh" / "id_rsa"
    home_key.parent.mkdir(parents=True)
    home_key.write_text("PRIVATE KEY")
    venv_site = next(p for p in sys.path if p.endswith("site-packages"))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
            socket.create_server(("127.0.0.1", 0)) as tcp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        unix.bind(str(tmp_path / "listen.sock"))
        unix.listen()
        options = {"udp_port": str(udp.getsockname()[1]), "unix_path": str(tmp_path / "listen.sock"),
                   "tcp_port": str(tcp.getsockname()[1]), "read_path": str(home_key), "write_dir": venv_site}
        seen = outcomes(anyio.run(probe_in_worker, options))
        with pytest.raises(BlockingIOError):
            udp.recv(4096)  # nothing arrived
    for channel in ("udp", "unix", "fork", "subprocess"):
        assert seen[channel].startswith("PermissionError [Errno 1]"), (channel, seen[channel])
    assert seen["tcp"].startswith("PermissionError"), seen["tcp"]
    assert seen["dns"].startswith("gaierror") or seen["dns"].startswith("PermissionError"), seen["dns"]
    assert seen["read"].startswith("PermissionError [Errno 13]"), seen["read"]
    assert seen["write"].startswith("PermissionError [Errno 13]") and not Path(venv_site, "planted.pth").exists()
    assert seen["import"].startswith("OutsideFace shiftbench's module 'simulators.domains"), seen["import"]
    assert seen["keys"] == "OK 'none'" and SECRET not in str(seen)
    assert set(seen["environment"].split(",")) <= {"HOME", "TMPDIR", "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
                                                   "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONUTF8",
                                                   "PYTHONIOENCODING", "LANGUAGE"}, seen["environment"]


def test_the_same_probe_gets_through_without_the_boundary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: in this process each channel the worker refused is open, so the test above fails when
    the boundary does."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    target = tmp_path / "readable.txt"
    target.write_text("readable")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
            socket.create_server(("127.0.0.1", 0)) as tcp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
        udp.bind(("127.0.0.1", 0))
        unix.bind(str(tmp_path / "listen.sock"))
        unix.listen()
        options = {"udp_port": str(udp.getsockname()[1]), "unix_path": str(tmp_path / "listen.sock"),
                   "tcp_port": str(tcp.getsockname()[1]), "read_path": str(target), "write_dir": str(tmp_path)}
        seen = outcomes(probe_method.Probe(options).context(TASK.view()))
        assert udp.recv(4096) == SECRET.encode()
    for channel in ("udp", "unix", "tcp", "fork", "subprocess", "read", "write", "import"):
        assert seen[channel].startswith("OK"), (channel, seen[channel])
    assert "OPENAI_API_KEY" in seen["keys"]
    os.remove(tmp_path / "planted.pth")

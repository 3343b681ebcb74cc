"""Ctrl-C while the command line is still being imported (the first moments of any command, before
`main` and its own Ctrl-C handling run): one line and exit 130, as a Ctrl-C later, never a traceback.

The moment is made deterministic without touching the product: a `sitecustomize` on PYTHONPATH adds an
import hook that, when `runner.cli.main` is about to be imported (the console script's `from runner.cli
import main` is importing the package), says so on stdout and waits for a signal. The test then sends a
real SIGINT to the real console script, or to `python -m runner.cli`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HOOK = '''
import signal, sys

class _BlockBeforeCli:
    """Wait for a signal when runner.cli.main is about to be imported (once)."""

    def find_spec(self, name, path=None, target=None):
        if name == "runner.cli.main":
            sys.meta_path.remove(self)
            sys.stdout.write("importing runner.cli.main\\n")
            sys.stdout.flush()
            signal.pause()  # the SIGINT's KeyboardInterrupt is raised here, inside the import
        return None

sys.meta_path.insert(0, _BlockBeforeCli())
'''

CONSOLE_SCRIPT = Path(sys.executable).with_name("shiftbench")


@pytest.mark.parametrize("command", [
    pytest.param([str(CONSOLE_SCRIPT), "runs"], id="console-script"),
    pytest.param([sys.executable, "-m", "runner.cli", "--help"], id="python-m"),
])
def test_ctrl_c_while_the_cli_is_imported_prints_one_line_and_exits_130(tmp_path: Path, command: list[str]) -> None:
    if not Path(command[0]).exists():
        pytest.skip(f"no console script at {command[0]} (install the checkout: pip install -e .)")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(HOOK)
    path = [str(hooks), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "importing runner.cli.main\n"  # blocked inside the import now
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in err, err
    assert err == "shiftbench: interrupted\n"
    assert process.returncode == 130
    assert out == ""
    assert list(tmp_path.iterdir()) == [hooks]  # nothing opened or written: no journal, no .shiftbench

"""The CLI starts at once: `--help` loads no simulator domain, no method, no numpy, no HTTP client and no
journal; `runs` and `show` load no method and no numpy; `report` no method (issue 30 item 8).

A fresh interpreter runs the command through `runner.cli.main` and prints the modules it loaded, so this
checks the import graph, never a time. The names the help shows without importing their owners (the
registry's methods, the audits' faults and transforms) are held equal to the owners here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from methods.names import REGISTERED_METHODS
from methods.registry import METHOD_REGISTRY
from runner.audits.transforms import BUILT_IN
from runner.audits.vocabulary import BUILT_IN_TRANSFORMS
from runner.cli import main
from tests.runner.test_kill_resume import only_run

HEAVY = ("numpy", "methods.registry", "methods.tabular", "methods.spec", "simulators.domains", "simulators.registry",
         "httpx", "runner.providers", "runner.report", "runner.audits.faults", "runner.schedule",
         "runner.config.settings")
"""What no command's start needs; `--help` needs none of them, nor the journal."""

_LOADED = """
import sys
from runner.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = {heavy!r}
print("loaded:", *sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "httpx", "aiosqlite")
                      or any(m == h or m.startswith(h + ".") for h in heavy if "." in h)), file=sys.stderr)
"""


def loaded(*argv: str, cwd: Path | None = None) -> set[str]:
    code = _LOADED.format(heavy=HEAVY + ("runner.journal",))
    done = subprocess.run([sys.executable, "-c", code, *argv], check=True, capture_output=True, text=True, cwd=cwd)
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("loaded:")]
    return set(line.split()[1:])


def top(modules: set[str]) -> set[str]:
    """Each loaded module by the heaviest name of HEAVY it falls under (numpy.core -> numpy)."""
    return {next((h for h in HEAVY + ("runner.journal", "aiosqlite") if m == h or m.startswith(h + ".")), m)
            for m in modules}


@pytest.mark.parametrize("argv", [("--help",), ("run", "--help"), ("audit", "faults", "--help"),
                                  ("report", "--help"), ("probe", "--help")])
def test_help_loads_no_method_domain_numpy_client_or_journal(argv: tuple[str, ...]) -> None:
    assert top(loaded(*argv)) == set()


def test_runs_and_show_load_the_journal_but_no_method_and_no_numpy(
        built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--methods", "blind", "--scenarios", "retail_l1", "--pilot",
                 "1", "--journal", str(journal), "--display", "none"]) == 0
    run_id = only_run(journal)[0]
    assert top(loaded("runs", "--journal", str(journal))) == {"runner.journal", "aiosqlite"}
    assert top(loaded("show", run_id, "--limit", "1", "--journal", str(journal))) == {"runner.journal", "aiosqlite"}
    # The report needs numpy (its intervals) and the schedule's record formats of a method's failures and
    # times (runner.schedule.method_errors, method_time), but not the methods, the domains or a client.
    assert top(loaded("report", run_id, "--journal", str(journal))) == {
        "runner.journal", "aiosqlite", "numpy", "runner.report", "runner.config.settings", "runner.schedule"}


def test_the_names_help_shows_are_the_names_their_owners_hold() -> None:
    assert REGISTERED_METHODS == tuple(sorted(METHOD_REGISTRY))
    assert BUILT_IN_TRANSFORMS == tuple(BUILT_IN)


def test_help_loads_no_event_loop() -> None:
    # asyncio (with ssl and concurrent.futures) is 20 ms of a 70 ms start; only a command that runs a
    # coroutine (`runner.cli.parsing.run_async`) needs it.
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom runner.cli.main import main\ntry:\n    "
                           "main(['--help'])\nexcept SystemExit:\n    pass\nprint('asyncio' in sys.modules, "
                           "file=sys.stderr)"], check=True, capture_output=True, text=True)
    assert done.stderr.strip().splitlines()[-1] == "False"

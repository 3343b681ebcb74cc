"""The reading table's items 6-10 (issue 30): one line and only true lines, provenance a reader can check,
a CLI that starts at once, runs read from a notebook, the README as a newcomer reads it."""

from __future__ import annotations

import hashlib
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench.edge_rows import Bench, first_line
from bench.reading_table_items import loopback_server
from bench.reading_table_rows import Check, Row, Try, attempt, note_row, spoken

__all__ = ["item10", "item6", "item7", "item8", "item9"]

REPO = Path(__file__).resolve().parents[1]


# --- item 6: one line, and only true lines ---------------------------------------------------------


def item6(bench: Bench) -> Iterator[Row]:
    run = bench.runs["quickstart"]
    yield attempt(bench, Try("6", "resume of a finished run: one line, nothing before it", ("resume", run),
                             expect=2, quiet=True, want=("already complete",), absent=("Journal:",)))[0]
    yield attempt(bench, Try("6", "run --journal where none can be made: no journal or run id named first",
                             ("run", "--methods", "blind", "--scenarios", "pitch_l1", "--pilot", "1", "--display",
                              "none", "--journal", "/proc/shiftbench-reading.sqlite"), expect=2, quiet=True,
                             target=None, absent=("Journal:", "resuming run")))[0]
    row, _ = attempt(bench, Try("6", "a run in another journal: every command it prints names that journal",
                                ("run", "--methods", "blind", "--scenarios", "pitch_l1", "--pilot", "1", "--display",
                                 "none", "--journal", "other.sqlite"), columns=200, target="other.sqlite",
                                extra=_commands_name("other.sqlite")))
    yield row
    other = bench.run_id("other.sqlite")
    yield attempt(bench, Try("6", "runs rm there: its vacuum hint names the journal",
                             ("runs", "rm", other, "--journal", "other.sqlite"), target="other.sqlite",
                             want=("journal vacuum --journal",)))[0]
    yield from _resume_below_the_spend(bench)
    yield note_row("6", "resume of a changed method: one line, no \"Journal:\" line first",
                   "not tried here (an interrupted run of one's own method): tests/runner/test_method_change_kept.py",
                   "skipped")
    yield _ctrl_c_in_the_suite_build(bench)
    yield _ctrl_c_while_importing(bench)


PAID = """models = ["local"]

[endpoints.local]
kind = "openai-compatible"
model = "m"
base_url = "{base_url}/v1"

[prices.local]
input = 0.1
cached_input = 0.05
cache_write = 0.1
output = 0.2
"""


def _resume_below_the_spend(bench: Bench) -> Iterator[Row]:
    """A paid pilot (the loopback mock, priced) stopped by its cap, then resumed with a cap below its spend."""
    with loopback_server() as mock:
        (bench.root / "paid.toml").write_text(PAID.format(base_url=mock.base_url))
        env = {"OPENAI_COMPATIBLE_API_KEY": "sk-loopback"}
        yield attempt(bench, Try("6", "a paid pilot on the loopback mock stopped by its $0.006 cap", (
            "run", "--config", "paid.toml", "--methods", "blind", "--scenarios", "retail_l1", "--pilot", "1",
            "--budget", "0.006", "--display", "none", "--journal", "paid.sqlite"), target="paid.sqlite", env=env,
            want=("budget_exhausted", "--budget USD --journal")))[0]
        run = bench.run_id("paid.sqlite")
        yield attempt(bench, Try("6", "resume with a cap below its spend: one line naming the command to run", (
            "resume", run, "--budget", "0.0001", "--display", "none", "--journal", "paid.sqlite"), expect=2,
            quiet=True, target="paid.sqlite", env=env,
            want=("already spent", f"shiftbench resume {run} --budget USD --journal", "of its $0.00010 cap"),
            absent=("Journal:",)))[0]


def _commands_name(journal: str) -> Check:
    def check(done: subprocess.CompletedProcess[str]) -> list[str]:
        commands = [spoken(part) for part in re.split(r"\n(?=  shiftbench )", done.stdout)[1:]]
        commands = [command.split(" shiftbench ")[0] for command in commands]
        bare = [command for command in commands if f"--journal {Path(journal)}" not in command
                and "--journal /" not in command]
        said = re.findall(r"`(shiftbench [^`]*)`", done.stdout)
        # A new run (`shiftbench run --models MODEL ...`, the offline note's example) reads no journal.
        bare += [command for command in said
                 if "--journal" not in command and not command.startswith("shiftbench run ")]
        return [f"{len(bare)} commands without --journal: {bare[:1]}"] if bare or not commands else []
    return check


def _ctrl_c_in_the_suite_build(bench: Bench) -> Row:
    """The README's first command in a folder of its own, SIGINT once it says it builds the suite."""
    folder = bench.root / "ctrl-c"
    folder.mkdir()
    argv = ("run", "--display", "none")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("COLUMNS", None)
    process = subprocess.Popen([*bench.cli, *argv], cwd=folder, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    first = process.stdout.readline()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    problems = [] if first.startswith("Building the built-in suite") else [f"first line {first!r}"]
    problems += [] if process.returncode == 130 else [f"exit {process.returncode}, wanted 130"]
    problems += [f"printed {first_line(out)!r}"] if out.strip() else []
    problems += [f"left {left[:3]}"] if left else []
    problems += ["stderr not one line"] if len(err.splitlines()) != 1 or "Traceback" in err else []
    return Row("6", "Ctrl-C during the first-use suite build (its own folder)", "shiftbench run --display none",
               str(process.returncode), f"{len((first + out).splitlines())} + {len(err.splitlines())}", "-",
               f"{first.strip().replace(str(folder), 'ctrl-c')} | SIGINT | {first_line(err)}", "absent",
               "absent" if not left else f"{len(left)} files",
               "ok" if not problems else "**" + "; ".join(problems) + "**")


HOOK = """import signal, sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "runner.cli.main":
            sys.meta_path.remove(self)
            print("importing runner.cli.main", flush=True)
            signal.pause()
sys.meta_path.insert(0, _Block())
"""


def _ctrl_c_while_importing(bench: Bench) -> Row:
    """SIGINT while `runner.cli` is still being imported (a sitecustomize hook holds the import there)."""
    hooks = bench.root / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(HOOK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([*bench.cli, "runs"], cwd=bench.root, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    first = process.stdout.readline()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    fine = first.startswith("importing") and process.returncode == 130 and err == "shiftbench: interrupted\n"
    return Row("6", "Ctrl-C while runner.cli is imported (the first ~0.1-0.6 s of any command)", "shiftbench runs",
               str(process.returncode), f"{len(out.splitlines())} + {len(err.splitlines())}", "-",
               first_line(err) or "(nothing on stderr)", "-", "-",
               "ok" if fine and "Traceback" not in err else f"**{first_line(err)!r}, exit {process.returncode}**")


# --- item 7: provenance a reader can check ---------------------------------------------------------


def item7(bench: Bench) -> Iterator[Row]:
    source = REPO / "examples" / "notes_method" / "shiftbench_notes" / "notes.py"
    (bench.root / "notes.py").write_bytes(source.read_bytes())
    sha = hashlib.sha256(source.read_bytes()).hexdigest()
    yield attempt(bench, Try("7", "a run of the docs' own method file", (
        "run", "--methods", "blind,./notes.py:NOTES", "--scenarios", "retail_l1", "--pilot", "1", "--display", "none",
        "--journal", "notes.sqlite"), target="notes.sqlite"))[0]
    run = bench.run_id("notes.sqlite")
    yield attempt(bench, Try("7", f"its report's source hash is `sha256sum notes.py` ({sha[:12]})",
                             ("report", run, "--journal", "notes.sqlite"), target="notes.sqlite",
                             want=(f"source sha256 {sha[:12]}",)))[0]


# --- item 8: starts at once ------------------------------------------------------------------------

HEAVY = ("numpy", "methods.tabular", "methods.registry", "simulators.retail", "httpx")


def item8(bench: Bench) -> Iterator[Row]:
    run = bench.runs["quickstart"]
    for argv, heavy in ((("--help",), (*HEAVY, "asyncio")), (("runs",), HEAVY),
                        (("show", run, "--limit", "3"), HEAVY[:3]), (("report", run), HEAVY[1:3])):
        cpu = _cpu(bench, argv)
        tried = Try("8", f"{argv[0]}: CPU {cpu:.2f} s (one run; median of 5 in bench/README.md)", argv,
                    argv0=(sys.executable, "-X", "importtime", "-m", "runner.cli"), extra=_imports_none(heavy))
        row, _ = attempt(bench, tried)
        yield row


def _cpu(bench: Bench, argv: tuple[str, ...]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "runner.cli", *argv], cwd=bench.root, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _imports_none(heavy: tuple[str, ...]) -> Check:
    def check(done: subprocess.CompletedProcess[str]) -> list[str]:
        loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
        found = sorted(module for module in loaded for name in heavy if module == name or module.startswith(name + "."))
        return [f"imports {', '.join(found[:3])}"] if found else []
    return check


# --- item 9: runs in a notebook --------------------------------------------------------------------


def item9(bench: Bench) -> Iterator[Row]:
    """docs/notebook.md as written: its bash cell in a folder of its own, then its Python cells in order."""
    doc = (REPO / "docs" / "notebook.md").read_text()
    folder = bench.root / "notebook"
    folder.mkdir()
    [bash] = re.findall(r"```bash\n(.*?)```", doc, re.S)
    cells = re.findall(r"```python\n(.*?)```", doc, re.S)
    words = bash.split()
    assert words[0] == "shiftbench"
    started = time.perf_counter()
    made = subprocess.run([*bench.cli, *words[1:]], cwd=folder, capture_output=True, text=True, check=False)
    done = subprocess.run([sys.executable, "-c", "\n".join(cells)], cwd=folder, capture_output=True, text=True,
                          check=False)
    fine = made.returncode == 0 and done.returncode == 0 and "Traceback" not in done.stderr
    return iter([Row("9", f"docs/notebook.md executed: its run, then its {len(cells)} Python cells in one process",
                     "python -c '<the cells of docs/notebook.md>'", str(done.returncode),
                     f"{len(done.stdout.splitlines())} + {len(done.stderr.splitlines())}",
                     str(max((len(line) for line in done.stdout.splitlines()), default=0)),
                     f"{time.perf_counter() - started:.0f} s; " + (first_line(done.stderr) if done.returncode else
                                                                   first_line(done.stdout)), "-", "-",
                     "ok" if fine else f"**run exit {made.returncode}, cells exit {done.returncode}: "
                                       f"{first_line(made.stderr + done.stderr)}**")])


# --- item 10: the README as a newcomer reads it ----------------------------------------------------


def item10(bench: Bench) -> Iterator[Row]:
    run = bench.runs["quickstart"]
    yield attempt(bench, Try("10", "methods --help: check is optional", ("methods", "--help"),
                             want=("[check]",), absent=("{check}",)))[0]
    for what, argv in (("runs", ("runs",)),
                       ("show (failed episodes)", ("show", run, "--failed", "--stream", "scripted/blind", "--scenario",
                                                   "retail_l1", "--limit", "3")),
                       ("state", ("state", run, "--scenario", "retail_l1", "--window", "3")),
                       ("export", ("export", run, "--format", "jsonl", "--out", "logs/")),
                       ("report --html", ("report", run, "--html", "quickstart.html")),
                       ("show --phase, --replica", ("show", run, "--phase", "test", "--replica", "0", "--limit", "1")),
                       ("report --slices", ("report", run, "--slices", "--limit", "5"))):
        yield attempt(bench, Try("10", f"README walkthrough: {what}", argv))[0]
    readme = (REPO / "README.md").read_text()
    missing = [flag for flag in ("--phase", "--replica", "--slices", "--windows", "--full") if flag not in readme]
    yield note_row("10", "flags the issue found missing from the README", "all named" if not missing else
                   f"missing: {', '.join(missing)}", "ok" if not missing else "**missing**")

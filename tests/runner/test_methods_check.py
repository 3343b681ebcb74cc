"""`shiftbench methods check`: FAIL with evidence on methods that break a rule, PASS on every method
shiftbench ships (a small stream of the built-in suite on the offline scripted model). A method that
breaks one rule may fail more than one check (a context that changes the state also breaks a restore):
each planted fault must fail the check that names its rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from methods.registry import METHOD_REGISTRY
from runner.cli import main
from runner.method_check import CheckRequest, check_method

PLANTED = Path(__file__).resolve().parents[1] / "methods" / "planted_methods.py"


@pytest.mark.parametrize(("spec", "failing", "evidence"), [
    (f"slb:{PLANTED}:WindowReader", "context ignores labels",
     "changes with the labels: (serving, window 0) vs (serving, window 7): first difference at character 29: "
     "'he policy of window 0' vs 'he policy of window 7'"),
    (f"{PLANTED}:CURIOUS", "test tasks do not teach", "asking the context of test task "),
    (f"{PLANTED}:FORGETFUL", "load(state()) restores", "restored after position "),
    (f"{PLANTED}:DICEY", "learn is deterministic", "two instances given the same records differ"),
])
def test_a_planted_fault_fails_its_check_with_evidence(spec: str, failing: str, evidence: str, built_suite: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["methods", "check", spec, "--dataset", str(built_suite), "--pilot", "2"])
    out = capsys.readouterr().out
    assert code == 1, out
    failed = {line.split("  ")[1].strip(): line for line in out.splitlines() if line.startswith("FAIL")}
    assert failing in failed, out
    assert evidence in failed[failing], failed[failing]


def test_a_correct_method_passes_every_check(built_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["methods", "check", f"{PLANTED}:COUNTER", "--dataset", str(built_suite), "--pilot", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS  ") == 10 and "10 passed, 0 failed" in out


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "notes_method" / "shiftbench_notes" / "notes.py"


@pytest.mark.parametrize("name", [*sorted(METHOD_REGISTRY), f"{EXAMPLE}:NOTES"])
async def test_every_method_shiftbench_ships_and_the_worked_example_pass(name: str, built_suite: Path) -> None:
    _, results = await check_method(CheckRequest(name, {}, dataset=str(built_suite), pilot=2), lambda line: None)
    assert [r.name for r in results if not r.passed] == [], [r for r in results if not r.passed]


@pytest.mark.parametrize(("spec", "ended"), [(f"{PLANTED}:QUITTER", "os._exit(3) ended its worker"),
                                            (f"{PLANTED}:LEAVER", "SystemExit: 0")])
def test_a_method_that_ends_the_process_fails_the_check_instead_of_ending_it(
        spec: str, ended: str, built_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # os._exit and SystemExit(0) end whatever process runs the method: its worker, never the command, which
    # must neither vanish nor report the exit code of a check that never reached its end.
    code = main(["methods", "check", spec, "--dataset", str(built_suite), "--pilot", "2"])
    out = capsys.readouterr().out
    assert code == 1
    (line,) = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert line.startswith("FAIL  plays the stream  learn failed at ") and "planted_methods.py:" in line, line
    assert ended in line, line
    assert out.rstrip().endswith("0 passed, 1 failed")


def test_a_guest_method_refused_in_its_child_is_refused_once_with_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-dataset"
    code = main(["methods", "check", f"{PLANTED}:COUNTER", "--dataset", str(missing)])
    captured = capsys.readouterr()
    assert code == 2 and str(missing) in captured.err and "FAIL" not in captured.out

"""Output fits the terminal: tables laid out to a width never break a cell's word, the report and the
end-of-run summary fit 80 and 200 columns, and the report's tables are cut at --limit rows saying how
many they left out.

"No mid-cell wrapping" is checked against an independent rendering: the natural layout (width None,
one row a line) holds every word of every cell; a layout to a width must hold exactly the same words
(a cell broken inside a word would add fragments that are not words of the natural one), and each
row's cells in the same order.
"""

from __future__ import annotations

import itertools
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from runner.cli import main
from runner.common.tables import join_fitted, text_table, wrap_prose
from runner.report.summary import command_lines
from tests.support import cli_sweep

HEADERS = ["model", "method", "setting", "Avg H", "H interval", "Avg F", "F interval", "in tok/task",
           "out tok/task", "$ per task", "p50 latency s", "p95 latency s", "state"]
ALIGN = "lllrrrrrrrrrl"
ROWS = [[f"provider/model-{n}", ["blind", "tabular", "icl_full"][n % 3], ["retail_l1", "banking_l2", "pitch_l1"][n % 3],
         f"{10.5 * n:.1f}", f"[{n:.1f}, {n + 3.25:.1f}]", "100.0", "no interval (1 family)" if n % 4 == 0 else "[1, 2]",
         str(1234 * n), str(56 * n), f"{0.0012 * n:.4f}", f"{1.5 * n:.1f}", f"{4.5 * n:.1f}",
         "complete" if n % 2 else "partial (3 of 5 settings)"] for n in range(12)]


def words(text: str) -> set[str]:
    """The words of `text`, less the rules under headers (a panel repeats its keys, so a set)."""
    return {word for word in text.split() if word.strip("-")}


@pytest.mark.parametrize("width", [200, 120, 80, 60, 40, 24])
def test_a_table_fits_the_width_and_keeps_every_word_whole(width: int) -> None:
    natural = text_table(HEADERS, ROWS, ALIGN)
    laid = text_table(HEADERS, ROWS, ALIGN, width)
    assert max(len(line) for line in laid.splitlines()) <= width
    assert words(laid) == words(natural)  # no fragment of a word broken across lines
    for row in ROWS:  # every cell of every row is printed, whole words, in some layout
        for cell in row:
            assert all(word in laid for word in cell.split())


def test_a_table_that_fits_is_laid_out_as_it_always_was() -> None:
    natural = text_table(HEADERS, ROWS, ALIGN)
    widest = max(len(line) for line in natural.splitlines())
    assert text_table(HEADERS, ROWS, ALIGN, widest) == natural
    assert len(natural.splitlines()) == len(ROWS) + 2  # header, rule, one line a row
    assert natural.splitlines()[2].split()[:3] == ["provider/model-0", "blind", "retail_l1"]


def test_too_wide_a_table_splits_into_panels_that_each_name_the_row() -> None:
    laid = text_table(HEADERS, ROWS, ALIGN, 80)
    panels = laid.split("\n\n")
    assert len(panels) >= 2
    for panel in panels:  # each panel starts its rows with the row's keys: model, method, setting
        body = [line for line in panel.splitlines()[2:] if line.startswith("provider/")]
        assert [line.split()[:3] for line in body][:len(ROWS)] == [row[:3] for row in ROWS]


def test_a_terminal_too_narrow_for_two_columns_gets_one_line_per_cell() -> None:
    laid = text_table(["a long header name", "another long header"], [["provider/model-1", "x" * 30]], "ll", 24)
    assert laid.splitlines() == ["a long", "header name", "  provider/model-1",
                                 "another long", "header", "  " + "x" * 30]


def test_prose_wraps_between_words_and_keeps_fenced_lines() -> None:
    text = "intervals: " + "word " * 40 + "\n```\n" + "x " * 60 + "\n```"
    wrapped = wrap_prose(text, 50)
    assert all(len(line) <= 50 for line in wrapped.split("```")[0].splitlines())
    assert ("x " * 60).rstrip() in wrapped and words(wrapped) == words(text)


def test_a_long_command_breaks_with_a_continuation_that_pastes_as_one() -> None:
    words_ = ["shiftbench", "compare", "r1:provider/some-long-model/tabular", "r1:provider/some-long-model/blind",
              "--journal", "/tmp/a folder/journal.sqlite"]
    lines = command_lines(words_, 60, "  ")
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
    assert all(line.endswith(" \\") for line in lines[:-1])
    assert shlex.split(" ".join(line.removesuffix("\\") for line in lines)) == words_


@pytest.fixture(scope="module")
def swept(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return cli_sweep(built_suite, tmp_path_factory.mktemp("fits"), ("retail_l1", "pitch_l1"), ("blind", "oracle"))


@pytest.mark.parametrize("width", [80, 200])
def test_the_report_fits_the_terminal_and_keeps_every_word(swept: tuple[Path, str], width: int,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["report", run_id, "--all", "--journal", str(journal)]) == 0  # a pipe: natural widths
    natural = capsys.readouterr().out
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["report", run_id, "--all", "--journal", str(journal)]) == 0
    laid = capsys.readouterr().out
    assert max(len(line) for line in laid.splitlines()) <= width
    assert words(laid) == words(natural)
    if width == 200:  # every table's rows fit: one line a row, as in a pipe
        assert [line for line in laid.splitlines() if line.startswith("scripted ")] == \
               [line for line in natural.splitlines() if line.startswith("scripted ")]


@pytest.mark.parametrize("width", [80, 200])
def test_compare_fits_the_terminal_and_keeps_every_word(swept: tuple[Path, str], width: int,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    args = ["compare", f"{run_id}:scripted/oracle", f"{run_id}:scripted/blind", "--journal", str(journal)]
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(args) == 0
    natural = capsys.readouterr().out
    assert max(len(line) for line in natural.splitlines()) > 80  # its prose runs on in a pipe
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(args) == 0
    laid = capsys.readouterr().out
    assert max(len(line) for line in laid.splitlines()) <= width
    assert words(laid) == words(natural)
    avg_h = next(line for line in natural.splitlines() if line.startswith("Avg H"))
    assert avg_h in laid.splitlines()  # a row that fits is one line, as in a pipe


def test_the_report_cuts_each_table_at_the_limit_and_says_how_to_see_the_rest(
        swept: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    assert main(["report", run_id, "--limit", "3", "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    windows = out.split("\nWindows\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # 2 streams x (6 retail + 4 pitch windows) = 20 rows, 3 shown
    assert [line for line in windows if line.startswith("scripted ")][3:] == []
    assert "... 17 more rows of 20; --windows or --all prints every one, --limit N the first N" in out
    assert main(["report", run_id, "--windows", "--journal", str(journal)]) == 0
    every = capsys.readouterr().out
    assert len([line for line in every.splitlines() if line.startswith("scripted ")]) == 20
    assert main(["report", run_id, "--limit", "-3", "--journal", str(journal)]) == 2


def windows_section(report: str) -> str:
    """The per-window table of a whole text report: its title line, then its panels (each opens with the
    row's names, `model ...`) up to the next section's title."""
    first, *rest = report.split("\nWindows\n", 1)[1].split("\n\n")
    panels = [first, *itertools.takewhile(lambda block: block.startswith("model"), rest)]
    return "Windows\n" + "\n\n".join(panels)


@pytest.mark.parametrize("width", [None, 80])
def test_report_windows_prints_the_per_window_table_alone(swept: tuple[Path, str], width: int | None,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    if width is not None:
        monkeypatch.setenv("COLUMNS", str(width))
    assert main(["report", run_id, "--all", "--journal", str(journal)]) == 0
    whole = capsys.readouterr().out
    assert main(["report", run_id, "--windows", "--journal", str(journal)]) == 0
    alone = capsys.readouterr().out
    assert alone.rstrip("\n") == windows_section(whole)  # that table, every row, and nothing else
    assert "Scores" not in alone and len([line for line in alone.splitlines() if "retail_l1" in line]) >= 12
    if width is not None:
        assert max(len(line) for line in alone.splitlines()) <= width
    assert main(["report", run_id, "--windows", "--limit", "3", "--journal", str(journal)]) == 0
    assert "... 17 more rows of 20" in capsys.readouterr().out  # a --limit given still cuts it
    assert main(["report", run_id, "--windows", "--md", "--journal", str(journal)]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0] == "## Windows" and md[2].startswith("| model | method | setting | window |") and len(md) == 2 + 2 + 20


@pytest.mark.parametrize("other", [["--json"], ["--slices"], ["--html", "page.html"]])
def test_report_windows_with_a_format_that_has_no_window_table_is_refused_in_one_line(
        swept: tuple[Path, str], other: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    monkeypatch.chdir(tmp_path)
    assert main(["report", run_id, "--windows", *other, "--journal", str(journal)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert captured.out == "" and line.startswith("shiftbench: error: --windows") and other[0] in line
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("width", [80, 200])
def test_the_end_of_run_summary_fits_a_screen(built_suite: Path, tmp_path: Path, width: int,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    journal, run_id = cli_sweep(built_suite, tmp_path, ("retail_l1", "pitch_l1"), ("blind", "oracle"))
    out = capsys.readouterr().out
    summary = out[out.index(f"run {run_id}: "):].splitlines()
    # Everything before it too (the pilot's projection and its table): a line passes the width only where a
    # path is kept whole.
    assert [line for line in out.splitlines() if len(line) > width and "/" not in max(line.split(), key=len)] == []
    # The test's journal path is one word longer than 80 columns: kept whole, on a line of its own.
    assert all(len(line) <= width or line.split()[-1].rstrip("\\") in (f"{journal}", "\\")
               for line in summary) and len(summary) <= 26  # a screen, the long path's continuations aside
    assert summary[1] == "scenarios retail_l1, pitch_l1"
    board = [line for line in summary if line.startswith("scripted ")]
    assert [line.split()[:2] for line in board] == [["scripted", "blind"], ["scripted", "oracle"]]
    assert "Windows" not in out and "Tokens, cost and latency" not in out  # `report` has them
    commands = " ".join(line.strip().removesuffix("\\") for line in summary if line.startswith("  shiftbench")
                        or line.startswith("      --") or line.startswith("      " + str(journal)[:4]))
    assert f"shiftbench report {run_id} --journal {journal}" in " ".join(commands.split())


# --------------------------------------------------------------- every command on the quickstart's run

def long_lines(text: str, width: int = 80) -> list[str]:
    """The lines of `text` wider than `width`, less a word kept whole on a line of its own (a path: it can
    only be copied whole), alone or before a command's ` \\` continuation."""
    return [line for line in text.splitlines()
            if len(line) > width and len(line.removesuffix("\\").split()) > 1]


def run_cli(args: list[str], folder: Path, columns: str | None = "80") -> subprocess.CompletedProcess[str]:
    """`shiftbench ARGS` as a user types it in `folder` (its default journal), in a process of its own."""
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "runner.cli", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def quickstart(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The README quickstart's run (every scenario, scripted, blind and oracle, no pilot) started at 80
    columns with the plain display (its status lines are printed lines too); (folder, run id, its output)."""
    folder = tmp_path_factory.mktemp("quickstart")
    done = run_cli(["run", "--dataset", str(built_suite), "--display", "plain"], folder)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(folder / ".shiftbench" / "journal.sqlite") as db:
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    return folder, run_id, done.stdout + done.stderr


READING = [
    ["report", "{run}"], ["report", "{run}", "--all"], ["report", "{run}", "--slices"],
    ["report", "{run}", "--windows"],
    ["compare", "{run}:scripted/oracle", "{run}:scripted/blind"],
    ["compare", "{run}:scripted/oracle", "{run}:scripted/blind", "--shared"],
    ["show", "{run}"], ["show", "{run}", "--failed", "--stream", "scripted/blind", "--scenario", "retail_l1"],
    ["show", "{run}", "--failed", "--scenario", "pitch_l3", "--limit", "2", "--full"],
    ["state", "{run}", "--scenario", "retail_l1"], ["state", "{run}", "--scenario", "banking_l2", "--window", "3"],
    ["estimate", "{run}"], ["runs"], ["probe", "scripted"], ["probe", "scripted", "--full"], ["methods"],
]


@pytest.mark.slow
def test_every_line_the_quickstarts_run_and_resume_print_fits_80_columns(
        quickstart: tuple[Path, str, str]) -> None:
    folder, run_id, printed = quickstart
    assert "completed" in printed and long_lines(printed) == []
    status = [line for line in printed.splitlines() if line.startswith("[0:")]
    assert status and all(" | " in line for line in status)  # the plain display's lines, each folded
    with sqlite3.connect(folder / ".shiftbench" / "journal.sqlite") as db:
        db.execute("UPDATE runs SET status = 'interrupted'")  # as if stopped: nothing is left to run
    resumed = run_cli(["resume", run_id, "--display", "plain"], folder)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming run {run_id}" in resumed.stdout and long_lines(resumed.stdout + resumed.stderr) == []


@pytest.mark.slow
@pytest.mark.parametrize("args", READING, ids=[" ".join(a[:1] + a[2:]) for a in READING])
def test_every_line_a_reading_command_prints_on_the_quickstarts_run_fits_80_columns(
        quickstart: tuple[Path, str, str], args: list[str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder, run_id, _ = quickstart
    monkeypatch.chdir(folder)
    monkeypatch.setenv("COLUMNS", "80")
    assert main([arg.format(run=run_id) for arg in args]) == 0
    out = capsys.readouterr()
    assert out.out.strip() and long_lines(out.out + out.err) == []


@pytest.mark.slow
@pytest.mark.parametrize("method", ["blind", "oracle"])
def test_methods_check_of_the_quickstarts_methods_fits_80_columns(
        built_suite: Path, method: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["methods", "check", method, "--dataset", str(built_suite), "--pilot", "2"]) == 0
    out = capsys.readouterr().out
    assert "10 passed, 0 failed" in out and long_lines(out) == []


@pytest.mark.slow
def test_an_error_stays_one_line_at_80_columns(quickstart: tuple[Path, str, str]) -> None:
    folder, run_id, _ = quickstart
    for args in (["state", run_id], ["resume", run_id], ["show", run_id, "--scenario", "nowhere"]):
        done = run_cli(args, folder)
        assert done.returncode == 2 and done.stdout == ""
        (line,) = done.stderr.splitlines()  # one line by contract, however long: scripts read it whole
        assert line.startswith("shiftbench: error: ") and len(line) > 80


def test_a_pipe_keeps_one_line_per_status_and_per_method(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    parts = ["[0:00:06] completed 6420/6420 units (100%)", "H 52.4 F 100.0", "tokens 0 in 0 out",
             "$0.00 spent, $0.00 reserved", "cache -", "calls 0/64", "retries 0 429s 0", "ETA 0:00:00"]
    assert join_fitted(parts, " | ", None) == " | ".join(parts)  # no COLUMNS, no terminal: grep reads one line
    folded = join_fitted(parts, " | ", 40).splitlines()  # the first part alone is 42: it wraps between words
    assert all(len(line) <= 40 for line in folded) and folded[2].startswith("  | H 52.4")
    assert " ".join(" ".join(folded).replace(" | ", " ").split()) == " ".join(" ".join(parts).split())
    assert join_fitted(["a" * 5, "b" * 5], " | ", 13) == "aaaaa | bbbbb"  # exactly the width: one line
    assert join_fitted(["a" * 5, "b" * 5], " | ", 12) == "aaaaa\n  | bbbbb"  # a column short: the break
    assert main(["methods"]) == 0  # a pipe: one line a method, as scripts read it
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed[:3]] == ["blind", "oracle", "icl_full"]
    assert max(len(line) for line in listed) > 80

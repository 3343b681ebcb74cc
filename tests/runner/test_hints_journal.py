"""Every hint that names a command runs as printed (issue 30 item 6): with a journal other than the default
it carries `--journal PATH`, and a run's hint its run id. The provider-failure advice (a run stopped by an
unreachable endpoint or a rejected key), `runs rm`'s vacuum hint, the HTML page's `show` commands and the
end-of-run summary's `report` command; the rest (Ctrl-C, budget, method_error, pilot) where their runs are
tested (test_interrupt, test_true_lines, test_guest_failures, test_pilot_stops, test_failure_policy)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from runner.cli import main
from runner.providers.taxonomy import POLICIES, ProviderError
from tests.support import cli_sweep


def test_every_provider_advice_naming_a_command_names_the_run_and_its_journal() -> None:
    resume = "shiftbench resume r-1 --journal /data/other.sqlite"
    naming = 0
    for failure in POLICIES:
        line = ProviderError("HTTP 500", failure=failure).headline(resume)
        assert "{" not in line, line  # no template left unfilled
        for command in re.findall(r"`(shiftbench [^`]*)`", line):
            assert command == resume, line
            naming += 1
        assert "`shiftbench resume`" not in line
    assert naming >= 7  # auth, rate limit, overloaded, server error, timeout, transport, malformed, endpoint down


@pytest.fixture(scope="module")
def elsewhere(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """An offline run in a journal that is not the default one."""
    return cli_sweep(built_suite, tmp_path_factory.mktemp("elsewhere"), ("retail_l1",), ("blind", "oracle"))


def test_runs_rm_names_the_journal_to_vacuum(built_suite: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = cli_sweep(built_suite, tmp_path, ("pitch_l1",), ("blind",))
    capsys.readouterr()
    assert main(["runs", "rm", run_id, "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    [hint] = re.findall(r"`(shiftbench journal vacuum[^`]*)`", out)
    assert shlex.split(hint) == ["shiftbench", "journal", "vacuum", "--journal", str(journal)]


def test_the_html_page_names_the_journal_in_its_show_commands(elsewhere: tuple[Path, str], tmp_path: Path) -> None:
    journal, run_id = elsewhere
    page = tmp_path / "report.html"
    assert main(["report", run_id, "--html", str(page), "--journal", str(journal)]) == 0
    commands = re.findall(r"<code>(shiftbench show [^<]*)</code>", page.read_text())
    assert commands, "the page names no show command"
    assert all(command.endswith(f" --journal {journal}") and f"show {run_id} " in command for command in commands)


def test_the_summary_names_the_journal_in_every_command(elsewhere: tuple[Path, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio

    import runner.report.summary as summary
    from runner.report import build_report

    journal, run_id = elsewhere
    monkeypatch.setattr(summary, "LEADERBOARD_ROWS", 1)  # the leaderboard cut: its line names `report`
    text = summary.render_summary(anyio.run(build_report, journal, run_id), None, ["--journal", str(journal)])
    commands = re.findall(r"`(shiftbench [^`]*)`", text) + [
        line.strip() for line in text.splitlines() if line.strip().startswith("shiftbench ")]
    assert f"`shiftbench report {run_id} --journal {journal}` lists every stream" in " ".join(text.split()), text
    assert all(shlex.split(command.rstrip(" \\"))[-2:] == ["--journal", str(journal)] or
               f"--journal {journal}" in command for command in commands), commands

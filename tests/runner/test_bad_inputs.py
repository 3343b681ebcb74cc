"""Inputs that cannot hurt: each bad flag, sweep-file field or path ends with one line and exit code 2,
and nothing on disk is created or changed."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from runner.cli import main
from tests.runner.test_cli_errors import one_error_line

ENDPOINT = '[endpoints.local]\nkind = "openai-compatible"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
POOL = '[endpoints.local]\nkind = "openai-compatible"\nmodel = "m"\n'


def tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under root with its mode and (for files) content."""
    found: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(root.rglob("*")):
        found[str(path.relative_to(root))] = (path.stat().st_mode, path.read_bytes() if path.is_file() else None)
    return found


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current folder of the user's own, to see that nothing is written into it."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize(("argv", "expected"), [
    (["--budget", "nan"], "budget must be a positive number of USD, got nan"),
    (["--budget", "inf"], "budget must be a positive number of USD, got inf"),
    (["--budget", "-3"], "budget must be a positive number of USD"),
    (["--concurrency", "0"], "concurrency must be between 1 and"),
    (["--max-tokens", "0"], "max_tokens must be between 1 and"),
    (["--seed", "-1"], "seed must be between 0 and"),
    (["--pilot", "-2"], "argument --pilot: expected a whole number between 0 and 10000000, got '-2'"),
    (["--judge", "scripted"], "judge 'scripted' cannot judge pitches"),
    (["--max-turns", "0"], "argument --max-turns: expected a whole number between 1 and 10000, got '0'"),
    (["--max-turns", "ten"], "argument --max-turns: expected a whole number between 1 and 10000, got 'ten'"),
    (["--temperature", "2.5"], "argument --temperature: expected a number from 0 to 2, got '2.5'"),
    (["--temperature", "nan"], "argument --temperature: expected a number from 0 to 2, got 'nan'"),
    (["--temperature", "0,7"], "argument --temperature: expected a number from 0 to 2, got '0,7'"),
    (["--call-timeout", "0.5"], "argument --call-timeout: expected a number of seconds from 1 to 86400, got '0.5'"),
    (["--call-timeout", "inf"], "argument --call-timeout: expected a number of seconds from 1 to 86400, got 'inf'"),
    (["--call-timeout", "30s"], "argument --call-timeout: expected a number of seconds from 1 to 86400, got '30s'"),
])
def test_bad_numeric_flags(argv: list[str], expected: str, here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree(here)
    assert main(["run", *argv, "--display", "none"]) == 2
    assert expected in one_error_line(capsys)
    assert tree(here) == before


@pytest.mark.parametrize(("text", "expected"), [
    ("budget = nan\n", "budget must be a positive number of USD, got nan"),
    ("budget = inf\n", "budget must be a positive number of USD, got inf"),
    ("concurrency = 1.5\n", "concurrency must be a whole number; got 1.5"),
    ("endpoint_down_after_s = -inf\n", "endpoint_down_after_s must be a positive number of seconds"),
    ("max_request_attempts = 0\n", "max_request_attempts must be between 1 and 100"),
    ('models = ["local"]\n' + ENDPOINT + "max_concurrency = 0\n", "max_concurrency must be a whole number"),
    ('models = ["local"]\n' + ENDPOINT + 'max_concurrency = "x"\n', "max_concurrency must be a whole number"),
    ('models = ["local"]\n' + ENDPOINT + "requests_per_minute = 0\n", "requests_per_minute must be a positive"),
    ('models = ["local"]\n' + ENDPOINT + "requests_per_minute = -5\n", "requests_per_minute must be a positive"),
    ('models = ["local"]\n' + ENDPOINT + 'tokens_per_minute = "lots"\n', "tokens_per_minute must be a positive"),
    ('models = ["local"]\n' + ENDPOINT + 'stream = "no"\n', "stream must be true or false"),
    ('models = ["local"]\n' + ENDPOINT + "max_tokens = 0\n", "max_tokens must be a whole number"),
    ('models = ["local"]\n' + ENDPOINT + 'base_urls = ["http://127.0.0.1:9/v1"]\n',
     "[endpoints.local]: give base_url or base_urls, not both"),
    ('models = ["local"]\n' + POOL + "base_urls = []\n", "base_urls must be a non-empty list of strings"),
    ('models = ["local"]\n' + POOL + 'base_urls = ["127.0.0.1:9/v1"]\n', "base_urls must start with http://"),
    ('models = ["local"]\n' + POOL + 'base_urls = ["http://a/v1", "http://a/v1"]\n', "the same replica twice"),
    ('models = ["local"]\n' + POOL + 'base_urls = ["http://a/v1", "http://b/v1"]\napi_key_env = "K"\n'
     'api_key_envs = ["K1", "K2"]\n', "give api_key_env or api_key_envs, not both"),
    ('models = ["local"]\n' + POOL + 'base_urls = ["http://a/v1", "http://b/v1"]\napi_key_envs = ["A", "B", "C"]\n',
     "base_urls has 2 entries and api_key_envs 3"),
    ('models = ["local"]\n' + POOL + 'base_urls = ["http://a/v1", "http://b/v1"]\napi_key_envs = ["POOL_KEY_SET",'
     ' "POOL_KEY_UNSET"]\n', "needs its API key in the environment variable POOL_KEY_UNSET"),
    ("max_turns = 0\n", "sweep.toml: max_turns must be between 1 and 10000, got 0"),
    ("max_turns = 2.5\n", "sweep.toml: max_turns must be a whole number; got 2.5"),
    ("temperature = -0.1\n", "sweep.toml: temperature must be a number from 0 to 2, got -0.1"),
    ('temperature = "cold"\n', "sweep.toml: temperature must be a finite number; got the string \"cold\""),
    ("call_timeout = 0\n", "sweep.toml: call_timeout must be a number of seconds from 1 to 86400, got 0.0"),
    ("call_timout = 60\n", "unknown key 'call_timout' (did you mean 'call_timeout'?)"),
])
def test_bad_sweep_file_fields(text: str, expected: str, here: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-x")
    monkeypatch.setenv("POOL_KEY_SET", "sk-y")
    monkeypatch.delenv("POOL_KEY_UNSET", raising=False)
    sweep = here / "sweep.toml"
    sweep.write_text(text)
    before = tree(here)
    assert main(["run", "--config", str(sweep), "--display", "none"]) == 2
    assert expected in one_error_line(capsys)
    assert tree(here) == before


def test_resume_with_a_bad_budget_changes_nothing(built_suite: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "banking_l1", "--methods", "blind",
                 "--pilot", "1", "--budget", "5", "--journal", str(journal), "--display", "none"]) == 0
    with sqlite3.connect(journal) as db:
        run_id, row = db.execute("SELECT run_id, budget_usd || config FROM runs").fetchone()
        db.execute("UPDATE runs SET status = 'interrupted'")
    capsys.readouterr()
    for bad in ("nan", "inf", "0"):
        assert main(["resume", run_id, "--budget", bad, "--journal", str(journal), "--display", "none"]) == 2
        assert "budget must be a positive number of USD" in one_error_line(capsys)
    with sqlite3.connect(journal) as db:
        assert db.execute("SELECT budget_usd || config FROM runs").fetchone()[0] == row


def test_journal_must_be_a_journal_or_an_absent_path(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = here / "results"
    folder.mkdir(mode=0o755)
    other = here / "notes.txt"
    other.chmod(0o644)
    foreign = here / "app.db"  # another program's SQLite database
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
    before = tree(here)
    for target, expected in ((folder, "is a folder"), (other, "exists and is not a shiftbench journal"),
                             (other / "j.sqlite", "notes.txt is not a folder; pass --journal PATH in a writable"),
                             (foreign, "app.db: an SQLite database that is not a shiftbench journal (tables: notes)")):
        assert main(["run", "--journal", str(target), "--display", "none"]) == 2
        assert expected in one_error_line(capsys)
    assert tree(here) == before
    assert stat.S_IMODE(other.stat().st_mode) == 0o644 and stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_an_empty_journal_file_left_by_a_kill_before_its_first_page_takes_a_new_run(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed between creating the journal file and SQLite's first write leaves 0 bytes behind."""
    journal = here / "killed.sqlite"
    journal.touch(mode=0o600)
    assert main(["run", "--journal", str(journal), "--scenarios", "banking_l1", "--methods", "blind", "--pilot", "1",
                 "--display", "none"]) == 0
    with sqlite3.connect(journal) as db:
        assert db.execute("SELECT status FROM runs").fetchall() == [("completed",)]


def test_a_run_that_cannot_start_writes_nothing(here: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An unreachable endpoint: the probe fails before the built-in suite or the journal is written."""
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-x")
    before = tree(here)
    assert main(["run", "--models", "openai-compatible:m@http://127.0.0.1:9/v1", "--allow-unpriced",
                 "--display", "none"]) == 2
    assert "probe of 'openai-compatible:m@http://127.0.0.1:9/v1' failed" in one_error_line(capsys)
    assert tree(here) == before


def test_data_build_never_replaces_what_is_not_a_suite(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = here / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    file = here / "notes.txt"
    before = tree(here)
    for target, expected in ((mine, "holds files that are not a built-in suite ('thesis.tex')"),
                             (file, "is not a folder")):
        assert main(["data", "build", "--out", str(target)]) == 2
        assert expected in one_error_line(capsys)
    assert tree(here) == before


def test_data_build_replaces_an_earlier_suite_and_says_so(built_suite: Path, here: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    earlier = here / "suite"
    shutil.copytree(built_suite, earlier)
    stale = earlier / "data" / "retail_l1" / "test.jsonl"
    stale.write_text("")
    assert main(["data", "build", "--out", str(earlier)]) == 0
    assert f"Replacing the earlier built-in suite in {earlier}" in capsys.readouterr().out
    assert stale.read_bytes() == (built_suite / "data" / "retail_l1" / "test.jsonl").read_bytes()
    assert sorted(os.listdir(here)) == ["notes.txt", "suite"]

"""Sweep files, plans and gate rules checked whole (item 5 of issue 21): every value of its kind (a list
is a list, a number finite), every key known in every table whether or not the sweep uses it, each
problem one line naming the file, the table and the nearest known key, and nothing written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from runner.cli import main
from tests.media import snapshot
from tests.runner.test_cli_errors import one_error_line
from tests.support import cli_sweep

LOCAL = '[endpoints.local]\nkind = "openai-compatible"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("text", "table", "expected"), [
    ('methods = "blind"\n', "", 'methods must be a list of names, e.g. methods = ["blind"]; got the string "blind"'),
    ('methods = "blind,oracle"\n', "", 'e.g. methods = ["blind", "oracle"]; got the string "blind,oracle"'),
    ('[sweep]\nscenarios = "retail_l1"\n', " [sweep]", 'scenarios must be a list of names, e.g. scenarios = '
                                                      '["retail_l1"]'),
    ("models = [1]\n", "", 'models must be a list of strings, e.g. models = ["scripted"]; got the list [1]'),
    ("labels = [true]\n", "", "labels must be a list of strings"),
    ('seed = "7"\n', "", 'seed must be a whole number; got the string "7"'),
    ("allow_unpriced = 1\n", "", "allow_unpriced must be true or false; got 1"),
    ("prices = 3\n", "", "prices must be a table; got 3"),
    ("[sweep]\nblock_sise = 2\n", " [sweep]", "unknown key 'block_sise' (did you mean 'block_size'?)"),
    ('[sweep]\nmethods = ["blind"]\n[pricse."scripted"]\ninput = 1\n', "",
     "unknown table 'pricse' (did you mean 'prices'?); known: batch, endpoints, methods, prices, sweep"),
    ('[sweep]\nmethods = ["blind"]\n[prices."x"]\ninput = 1\n[sweep.prices."y"]\ninput = 2\n', "",
     "prices is given both at the top level and under [sweep]; keep one"),
    # Tables no model of this sweep uses are checked all the same.
    ('models = ["scripted"]\n[prices."openai:gpt-x"]\ninptu = 1\ncached_input = 1\ncache_write = 1\noutput = 1\n',
     "", "[prices.\"openai:gpt-x\"]: unknown key 'inptu' (did you mean 'input'?)"),
    ('models = ["scripted"]\n[prices."openai:gpt-x"]\ninput = nan\ncached_input = 1\ncache_write = 1\noutput = 1\n',
     "", "input must be a finite number >= 0, got nan"),
    ('models = ["scripted"]\n' + LOCAL + "max_concurrency = 0\n", " [endpoints.local]",
     "[endpoints.local]: max_concurrency must be a whole number from 1 to 100000"),
    ('models = ["scripted"]\n' + LOCAL + "max_concurrency = nan\n", " [endpoints.local]",
     "[endpoints.local]: max_concurrency must be a whole number from 1 to 100000, got nan"),
    ('models = ["local"]\n' + LOCAL + '[endpoints.local.extra_body.agnet]\ntool_choice = "auto"\n',
     " [endpoints.local]",
     "[endpoints.local]: extra_body.agnet is not a scope (did you mean 'agent'?)"),
])
def test_a_sweep_file_is_checked_whole(text: str, table: str, expected: str, here: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    sweep = here / "sweep.toml"
    sweep.write_text(text)
    before = snapshot(here)
    assert main(["run", "--config", str(sweep), "--display", "none"]) == 2
    line = one_error_line(capsys)
    assert expected in line, line
    if table or "unknown" in expected:
        assert f"{sweep}{table}: " in line, line
    assert snapshot(here) == before


def test_real_table_fields_of_extra_body_are_not_taken_for_scopes(here: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """OpenRouter's `provider` and `usage` are request fields that hold tables: sent, not refused."""
    from runner.config.settings import load_config_file
    from runner.models.registry import build_models

    sweep = here / "sweep.toml"
    sweep.write_text('models = ["local"]\nallow_unpriced = true\n' + LOCAL +
                     '[endpoints.local.extra_body.provider]\norder = ["a"]\n[endpoints.local.extra_body.usage]\n'
                     'include = true\n')
    assert set(build_models(load_config_file(sweep))) == {"local"}


RULE = '[[rule]]\nmetric = "avg_h"\nstream = "scripted/blind"\n'
PILOT = '[pilot]\nbase = "scripted/blind"\ntreat = "scripted/tabular"\nmeasure = "turns"\nmin_pairs = 2\n'


@pytest.mark.parametrize(("text", "expected"), [
    (RULE + "min = nan\n", "rules.toml [[rule]] 1: min must be a finite number; got nan"),
    (RULE + "max = inf\n", "rules.toml [[rule]] 1: max must be a finite number; got inf"),
    (RULE + "min = -inf\n", "min must be a finite number; got -inf"),
    (RULE + 'min = "5"\n', 'min must be a finite number; got the string "5"'),
    (RULE + "min = 1\nstraem = 'x'\n", "[[rule]] 1: unknown key 'straem' (did you mean 'stream'?)"),
    (PILOT + "min_median_r = nan\nbudget = 1\n", "rules.toml [pilot]: min_median_r must be a finite number; got nan"),
    (PILOT + "min_median_r = 0.1\nbudget = inf\n", "[pilot]: budget must be a finite number; got inf"),
    (PILOT + "min_median_r = 0.1\nbudgte = 1\n", "[pilot]: unknown key 'budgte' (did you mean 'budget'?)"),
    (RULE + "min = 1\n[pilott]\n", "rules.toml: unknown table 'pilott' (did you mean 'pilot'?)"),
])
def test_gate_rules_refuse_non_finite_numbers_and_unknown_keys(text: str, expected: str, here: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    rules = here / "rules.toml"
    rules.write_text(text)
    assert main(["gate", "r-any", "--rules", str(rules), "--journal", str(here / "j.sqlite")]) == 2
    assert expected in one_error_line(capsys)
    assert sorted(p.name for p in here.iterdir()) == ["rules.toml"]


PLAN = ('[plan]\ncomparison = ["scripted/blind", "scripted/oracle"]\nmetric = "avg_h"\ntest = "sign_test"\n{extra}\n'
        '[sweep]\nmethods = ["blind", "oracle"]\nscenarios = ["retail_l1"]\npilot = 1\n')


@pytest.mark.parametrize(("extra", "expected"), [
    ("threshold = nan", "PLAN.toml [plan]: threshold must be a finite number; got nan"),
    ("threshold = inf", "threshold must be a finite number; got inf"),
    ("threshold = 1\nbudget = -inf", "budget must be a finite number; got -inf"),
    ("threshold = 1\nmetirc = 'x'", "PLAN.toml [plan]: unknown key 'metirc' (did you mean 'metric'?)"),
    ("threshold = 1\n[lokc]", "PLAN.toml: unknown table 'lokc' (did you mean 'lock'?)"),
])
def test_plans_refuse_non_finite_numbers_and_unknown_keys(extra: str, expected: str, here: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    plan = here / "PLAN.toml"
    plan.write_text(PLAN.format(extra=extra))
    before = snapshot(here)
    assert main(["lock", str(plan)]) == 2
    assert expected in one_error_line(capsys)
    assert snapshot(here) == before


def test_resume_of_an_unknown_or_finished_run_says_nothing_of_resuming(
    built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id = cli_sweep(built_suite, tmp_path, ("banking_l1",), ("blind",))
    capsys.readouterr()
    before = run_rows(journal)
    flag = f"--journal {journal}"  # every hint carries the journal that is not the default one
    for target, expected in (("r-nope", f"no run 'r-nope'; `shiftbench runs {flag}` lists the runs there"),
                             (run_id, f"run {run_id} is already complete; `shiftbench report {run_id} {flag}` "
                                      "shows it")):
        assert main(["resume", target, "--journal", str(journal), "--display", "none"]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and expected in captured.err and len(captured.err.splitlines()) == 1
    assert run_rows(journal) == before


def run_rows(journal: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(journal)
    try:
        return db.execute("SELECT * FROM runs").fetchall()
    finally:
        db.close()

"""The edge table's items 5 and 7 (issue 21): sweep files, rules and plans checked whole (wrong types, NaN,
typos), and the code's provenance (`--version`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

from bench.edge_rows import PLAN, Bench, Edge, Row, attempt, write

__all__ = ["item5", "item7"]


# --- item 5: sweep files and rules checked whole ---------------------------------------------------

SWEEPS = {
    "methods-string.toml": ('`methods = "blind"` (top level)', 'methods = "blind"\n', ("list",)),
    "sweep-methods-string.toml": ('`methods = "blind"` in [sweep]', '[sweep]\nmethods = "blind"\n', ("list",)),
    "methods-mixed.toml": ('`methods = ["blind", 3]`', '[sweep]\nmethods = ["blind", 3]\n', ("strings",)),
    "budget-nan.toml": ("`budget = nan` in [sweep]", '[sweep]\nmethods = ["blind"]\nbudget = nan\n', ("nan",)),
    "sweep-typo.toml": ("unknown key in [sweep] (`pilott`)",
                        '[sweep]\nmethods = ["blind"]\nscenarios = ["retail_l1"]\npilott = 1\n', ("'pilot'",)),
    "top-typo.toml": ("unknown top-level key (`scenaros`)", 'methods = ["blind"]\nscenaros = ["retail_l1"]\n',
                      ("'scenarios'",)),
    "beside-sweep.toml": ("a top-level key beside [sweep] (`scenarios`)",
                          'scenarios = ["retail_l1"]\n[sweep]\nmethods = ["blind"]\n', ("scenarios",)),
    "method-typo.toml": ("unknown key in [methods.fast] (`frm`)",
                         '[sweep]\nmethods = ["fast"]\nscenarios = ["retail_l1"]\n[methods.fast]\nfrom = "tabular"\n'
                         'frm = 1\n', ("'from'",)),
    "unused-method-typo.toml": ("unknown key in an unused [methods.spare] (`optionz`)",
                                '[sweep]\nmethods = ["blind"]\nscenarios = ["retail_l1"]\n[methods.spare]\n'
                                'from = "tabular"\noptionz = 1\n', ("'options'",)),
    "option-typo.toml": ("unknown option in [methods.fast.options]",
                         '[sweep]\nmethods = ["fast"]\nscenarios = ["retail_l1"]\n[methods.fast]\nfrom = "tabular"\n'
                         '[methods.fast.options]\nlearning_rat = 0.1\n', ("learning_rat",)),
    "endpoint-typo.toml": ("unknown key in [endpoints.local] (`max_concurency`)",
                           'models = ["local"]\nscenarios = ["retail_l1"]\n[endpoints.local]\n'
                           'kind = "openai-compatible"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                           'max_concurency = 4\n', ("'max_concurrency'",)),
    "endpoint-nan.toml": ("`max_concurrency = nan` in [endpoints.local]",
                           'models = ["local"]\nscenarios = ["retail_l1"]\n[endpoints.local]\n'
                           'kind = "openai-compatible"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                           'max_concurrency = nan\n', ("endpoint-nan.toml", "nan")),
    "price-typo.toml": ("unknown key in [prices.scripted] (`inptu`)",
                        '[sweep]\nmethods = ["blind"]\nscenarios = ["retail_l1"]\n[prices.scripted]\ninptu = 0.0\n',
                        ("'input'",)),
}

RULE = '[[rule]]\nmetric = "avg_h"\nstream = "scripted/tabular"\n'
PILOT = '[pilot]\nbase = "scripted/blind"\ntreat = "scripted/tabular"\nmeasure = "turns"\nmin_pairs = 5\nbudget = 1.0\n'
RULES = {
    "rules-nan.toml": ("NaN in a gate rule (`min = nan`)", f"{RULE}min = nan\n", ("nan",)),
    "rules-inf.toml": ("an infinite gate rule (`max = inf`)", f"{RULE}max = inf\n", ("inf",)),
    "rules-pilot-nan.toml": ("NaN in a gate's [pilot] (`min_median_r = nan`)", f"{PILOT}min_median_r = nan\n",
                             ("nan",)),
    "rules-typo.toml": ("unknown key in a [[rule]] (`bse`)", f"{RULE}min = 1\nbse = \"scripted/blind\"\n",
                        ("'base'",)),
}


def item5(bench: Bench) -> Iterator[Row]:
    run = bench.runs["quickstart"]
    for name, (edge, text, want) in SWEEPS.items():
        yield attempt(bench, Edge("5", edge, ("run", "--config", write(bench, name, text), "--display", "none"),
                                  ".shiftbench/journal.sqlite", want=want, quiet=True))
    for name, (edge, text, want) in RULES.items():
        yield attempt(bench, Edge("5", edge, ("gate", run, "--rules", write(bench, name, text)), name, want=want))
    write(bench, "plan-nan.toml", PLAN.format(threshold="nan", extra=""))
    write(bench, "plan-key.toml", PLAN.format(threshold="10.0\nthreshhold = 3", extra=""))
    write(bench, "plan-typo.toml", PLAN.format(threshold="10.0", extra="budgett = 1.0\n"))
    for edge, argv, target, want in (
        ("lock a plan with `threshold = nan`", ("lock", "plan-nan.toml"), "plan-nan.toml", ("nan",)),
        ("run --plan with `threshold = nan`", ("run", "--plan", "plan-nan.toml", "--display", "none"),
         "plan-nan.toml", ("nan",)),
        ("lock a plan with an unknown key in [sweep] (`budgett`)", ("lock", "plan-typo.toml"), "plan-typo.toml",
         ("'budget'",)),
        ("lock a plan with an unknown key in [plan] (`threshhold`)", ("lock", "plan-key.toml"), "plan-key.toml",
         ("'threshold'",)),
        ("resume of an unknown run", ("resume", "r-no-such-run", "--display", "none"), ".shiftbench/journal.sqlite",
         ("runs",)),
        ("resume of a finished run", ("resume", run, "--display", "none"), ".shiftbench/journal.sqlite",
         ("complete",)),
    ):
        yield attempt(bench, Edge("5", edge, argv, target, want=want, quiet=True))


# --- item 7: provenance ----------------------------------------------------------------------------


def _head() -> str:
    done = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parent)
    return done.stdout.strip()


def item7(bench: Bench) -> Iterator[Row]:
    head = _head()
    yield attempt(bench, Edge("7", "--version from this checkout", ("--version",), expect=0,
                              want=(f"+g{head}",) if head else ()))

"""The report as sealed JSON: every field of the model, with a `sha256` over its canonical content
(`runner.stats.seal`), so a published number can be checked against the run it came from. Inside it,
`scores_seal` seals the scores alone (`runner.report.scores`): the same for the same results, whichever
run, process or machine journaled them; the outer `sha256` covers it too."""

from __future__ import annotations

from dataclasses import asdict

import orjson

from runner.report.model import Report
from runner.report.scores import scores_seal
from runner.stats.seal import seal

__all__ = ["render_json"]


def render_json(report: Report) -> str:
    """The report sealed: a `sha256` over its canonical content (`runner.stats.seal`)."""
    content = asdict(report)
    if report.batch is None:  # a run that batched nothing reads (and seals) as it did before batching existed
        del content["batch"]
    return orjson.dumps(seal({**content, "scores_seal": scores_seal(report)}),
                        option=orjson.OPT_INDENT_2).decode()

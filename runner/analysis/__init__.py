"""Reading a journal from Python, for a notebook: runs, episodes, per-setting scores with their intervals
and model calls, as typed rows or (with the `pandas` extra) as data frames, in the spirit of Inspect's
`evals_df` / `samples_df`.

    from runner.analysis import Results
    results = Results(".shiftbench/journal.sqlite")
    results.runs()                      # [RunSummary, ...], as `shiftbench runs` lists them
    results.scores_df()                 # the newest run's scores per setting: score, ci_low, ci_high, ...
    results.episodes_df("r2026...")     # one row per finished episode

- `results`: `Results`, the typed rows (`Score`; the journal's `EpisodeFigures`, `ModelCallRow`; the
  views' `RunSummary`; the report's `Report`), read on a read-only connection; safe to call where an event
  loop already runs (a Jupyter kernel's), since each read runs its own loop in a worker thread.
- `frames`: the same rows as pandas data frames (imported only when a `*_df` method is called; without
  pandas, one line naming the extra).

Nothing here writes to the journal; the figures are the report's own (`runner.report.build_report`).
docs/notebook.md is the walkthrough, run by the suite.

Arrows: analysis -> views, report, journal, common.
"""

from __future__ import annotations

from runner.analysis.results import Results, Score

__all__ = ["Results", "Score"]

"""Pilot runs: a few tasks per window, then what the full sweep would cost."""

from __future__ import annotations

from collections.abc import Sequence

from runner.common.journal_flag import journal_flag
from runner.common.tables import terminal_width, wrap_prose
from runner.config.plan import Stream
from runner.config.settings import SweepConfig
from runner.cost.batch_setting import batched_models
from runner.cost.budget import Budget
from runner.cost.cache_savings import run_price_table
from runner.cost.cap_buys import cap_buys
from runner.cost.estimate import (
    NothingToProject,
    full_counts,
    measure,
    offline_note,
    projection_rows,
    render_projection,
)
from runner.journal import Journal

__all__ = ["PILOT_MARGIN", "project_cost", "pilot_projection"]

PILOT_MARGIN = 1.3
"""Pilot tasks are the first of each window; later ones run longer prompts (methods accumulate), so the
projection carries a margin."""


def project_cost(pilot_spend: float, pilot_tasks: int, full_tasks: int) -> float:
    if pilot_tasks == 0:
        return 0.0
    return pilot_spend / pilot_tasks * full_tasks * PILOT_MARGIN


def full_task_count(streams: Sequence[Stream]) -> int:
    """Tasks of the same sweep without the pilot cut (serving only where the method learns)."""
    return sum((len(s.scenario.serving) if s.serving else 0) + len(s.scenario.test) * s.repeats for s in streams)


async def pilot_projection(journal: Journal, run_id: str, streams: Sequence[Stream], config: SweepConfig,
                           budget: Budget | None, status: str = "completed") -> str:
    """The full sweep's cost per model and method from the pilot's finished episodes: their tokens per
    turn, turns per episode and cache hit rates at the run's prices, with a 95% range (the pilot's
    spread), as `shiftbench estimate` computes it from the journal later. Probes and the calls of tasks
    a budget stop cut short project nothing."""
    finished = await journal.read.finished_spend(run_id)
    spent = (await journal.read.spend(run_id)).total
    full = full_task_count(streams)
    if finished.tasks == 0:
        # What to do depends on why: only a budget stop is cured by a higher cap (the report says why).
        resume = f"shiftbench resume {run_id}{journal_flag(journal.path)}"
        advice = (f"`{resume} --budget HIGHER` runs it on with a higher cap" if status == "budget_exhausted" else
                  f"once what stopped it is fixed, `{resume}` runs the pilot on")
        return wrap_prose(f"Pilot: no task finished (${spent:.4f} spent), so there is nothing to project the full "
                          f"sweep of {full} tasks from; {advice}", terminal_width())
    run = await journal.read.run(run_id)
    assert run is not None  # the pilot's own run, journaled before it started
    # A model run with --allow-unpriced has no rates to project its tokens at: it is named, not projected.
    prices = run_price_table(run.config)
    models = list(dict.fromkeys(s.model for s in streams))
    unpriced = [model for model in models if model not in prices]
    priced = [s for s in streams if s.model not in unpriced]
    measures = await measure(journal.read, run_id)
    # A method a budget stop cut off before any of its episodes finished has nothing to project from:
    # it is named, not projected (projecting it would refuse the whole table, after the run has ended).
    measured = {method for (_, method), found in measures.items() if found.episodes}
    methods = list(dict.fromkeys(s.method for s in priced))
    unmeasured = [method for method in methods if method not in measured]
    methods = [method for method in methods if method in measured]
    priced = [s for s in priced if s.method in measured]
    try:
        rows = projection_rows(measures, [m for m in models if m not in unpriced], methods, full_counts(priced),
                               prices, batched_models(config))
    except NothingToProject as nothing:
        return wrap_prose(f"Pilot: {finished.tasks} finished tasks, but {str(nothing).removeprefix('estimate: ')}",
                          terminal_width())
    projected, high = sum(r.projected_usd for r in rows), sum(r.high_usd for r in rows)
    batched = [r for r in rows if r.batched_usd is not None]
    live_note = ""
    if batched:  # the sweep will be charged the batched figure: that is what the budget must hold
        live_note = f" with --batch tests (${projected:.2f} live)"
        projected = sum(r.projected_usd if r.batched_usd is None else r.batched_usd for r in rows)
        high = sum(r.high_usd if r.batched_high_usd is None else r.batched_high_usd for r in rows)
    line = (f"Pilot: {finished.tasks} finished tasks cost ${finished.cost_usd:.4f}; the full sweep of {full} tasks "
            f"is projected at ${projected:.2f} (up to ${high:.2f}){live_note}"
            + (f", leaving out {', '.join(unpriced)} (no price)" if unpriced else "")
            + (f", leaving out {', '.join(unmeasured)} (no finished episode)" if unmeasured else ""))
    if config.budget is None:
        line += "; no budget set."
    else:
        left = config.budget - (budget.spent if budget else spent)
        verdict = "fits" if high <= left else ("may NOT fit" if projected <= left else "does NOT fit")
        line += f"; it {verdict} the ${left:.2f} left of the ${config.budget:.2f} budget."
        if verdict != "fits":
            line += " " + cap_buys(rows, left, [len(s.windows()) for s in streams], "left")
    if status == "budget_exhausted":  # the cap ended it with work left: a higher one runs the rest
        resume = f"shiftbench resume {run_id}{journal_flag(journal.path)}"
        line += f" `{resume} --budget HIGHER` runs it on with a higher cap."
    # Laid out to the terminal's width like the summary after it (whole lines to a pipe or a file).
    width = terminal_width()
    table = render_projection(rows, width) if rows else "(no priced model to project)"
    later = f"\n(the same table later: shiftbench estimate {run_id}{journal_flag(journal.path)})"
    return wrap_prose(line, width) + "\n" + table + wrap_prose(offline_note(models, methods) + later, width)

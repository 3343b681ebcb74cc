"""A run's live figures as it starts: from what the journal already holds, so a resumed run's dashboard
shows the run's episodes, tokens, spend and cache figures, not only this process's."""

from __future__ import annotations

from runner.config.plan import Stream
from runner.cost.cache_savings import CacheFigures, cache_total, run_price_table
from runner.display.progress import CacheCounter, RunProgress
from runner.journal import Journal
from runner.schedule.engine import stream_progress

__all__ = ["starting_progress"]


async def starting_progress(journal: Journal, run_id: str, streams: list[Stream]) -> RunProgress:
    progress = RunProgress(run_id=run_id, journal_path=str(journal.path))
    for stream in streams:
        progress.streams[stream.stream_id] = stream_progress(stream)
    for episode in await journal.read.finished_episodes(run_id):
        live = progress.streams[episode.stream_id]
        if episode.phase == "serving":
            live.serving_done += 1
        else:
            live.record_test(episode.category, episode.reward)
    progress.resumed_units = progress.done
    for live in progress.streams.values():
        live.serving_resumed = live.serving_done
    # Run-wide and per-stream figures start from what the run already sent and spent, so a resumed
    # dashboard shows the run's figures, not this process's.
    run = await journal.read.run(run_id)
    prices = run_price_table(run.config if run else "{}")
    usage = await journal.read.cache_usage(run_id)
    _add_figures(progress.cache, cache_total(usage, prices))
    # The same scope as the spend (the budget's: every call the run journaled): a resumed dashboard
    # showed this process's tokens beside the whole run's dollars.
    progress.add_tokens(sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage))
    for calls in await journal.read.stream_calls(run_id):
        shown = progress.streams.get(calls.stream_id)
        if shown is not None:
            shown.spent_usd += calls.cost_usd
            _add_figures(shown.cache, cache_total([calls.usage()], prices))
    return progress


def _add_figures(counter: CacheCounter, figures: CacheFigures) -> None:
    counter.add(figures.input_tokens, figures.cached_input_tokens, figures.cache_write_tokens, figures.saved_usd)

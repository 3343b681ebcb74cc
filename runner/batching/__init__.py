"""Test episodes' model calls answered through a provider's batch API (`--batch tests`), resumable without
paying twice.

- `collector`: one per (endpoint, model): the requests waiting to be batched, submitted when `max_items`
  wait or the oldest has waited `wait_s` (its clock is injectable, so tests drive time).
- `batcher`: `Batcher`, the run's batches: every batch and item journaled before the provider is asked,
  its id before anything polls, its results before any episode uses them; polls with backoff; recovers
  a killed run's batches (by label, or by polling the same id); a budget stop lets them end.
- `waiting`: what one waiting request holds and how an item's failure is answered (resubmitted once,
  then live; a rejected request is classified as the live path classifies a 400).
- `answers`: a response's encoding as the journal holds it (the response cache and batch items alike).

The client stack (`runner.models.stack`) puts a batching model's test calls through here, below its price
layer, so an item reserves its worst case at the batch price before it joins a batch.

Arrows: batching -> journal, providers, common.
"""

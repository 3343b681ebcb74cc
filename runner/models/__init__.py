"""Model clients as a run uses them: built from names, and wrapped in the one stack every call passes.

- `endpoints`: what a model name or a sweep file's `[endpoints.<name>]` points to (`Endpoint`), checked;
  `registry`: endpoints to clients (`build_models`), prices, pools.
- `stack`: `ClientStack`, the per-call stack (journal > gate > price; its docstring says why in that
  order): `journaled` (response cache and call rows), `gate` (priority limits), `priced` (the budget's
  reservation), with `capped`, `seeded`, `scoped`, `watched` for max tokens, replica seeds, scopes and
  calls in flight.
- `batched`: a batching model's test calls through the run's provider batches (`--batch tests`), and back
  to live for an item failed in its batches; `batch_lanes`: which models batch (refusals), the `Batcher`.
- `scripted`: the offline agents; `probe`: the run's first tiny request; `compat`: `probe --full` (its request size in
  `compat_sizes`, light for the command line).

Arrows: models -> cost, config, batching, display (progress), providers, journal, common.
"""

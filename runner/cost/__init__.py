"""Money: what a call costs, the run's hard cap, and what a sweep will cost.

- `pricing`: a call's cost and worst case from the price table (`runner/prices.toml` with the run's
  overrides, parsed by `runner.config.prices`).
- `budget`: the hard cap: each call reserves its worst case before it is sent, settles after.
- `cache_savings`: prompt-cache hit rates and the spend they saved, from the journal.
- `batch_savings`: a batched run's spend live and through batch APIs, and what batching saved;
  `batch_setting`: which models send their test calls through a batch API (`--batch tests`);
  `stream_sums`: the one loop that sums either's per-call figures per stream and over the run.
- `projection`, `estimate`, `pilot`: a full sweep's cost projected from a pilot's journal, with its range
  (and with `--batch tests`, batched beside live).

Arrows: cost -> config, journal, common. The reservation itself is made in `runner.models.priced`.
"""

"""Sweeps across machines: a sweep's cells split into shards that separate processes run (under SLURM,
a Kubernetes Indexed Job or a shell loop), each into its own journal, and the journals merged into one.

- `spec`: `--shard I/N` or `auto` (the scheduler's environment); `split`: the cells balanced by
  projected work; `money`: the sweep budget as per-shard caps; `start`: a shard's idempotent start.
- `inputs`, `agreement`, `merge`: `shiftbench journal merge`: every refusal before anything is written
  (`agreement`: the same budget, caps and settings in every shard), then one new journal (its SQL is
  `runner.journal.merge`'s). What a shard records of itself is
  `runner.journal.sweep_record`.

Arrows: shards -> schedule, models, cost, config, journal, common.
"""

"""Audits of a run: what its episodes did to the world, and how its agent behaves under faults and
meaning-preserving rewrites of its tasks.

- `rates`: the per-episode state audits (`simulators.audit`, journaled with every retail and banking
  episode) as rates with Clopper-Pearson intervals per stream, for reports and gates.
- `faults`: `shiftbench audit faults`: replay recorded episodes with one tool result replaced by a
  fault, after a control replay has reproduced the recording; verdicts per episode.
- `metamorphic`: `shiftbench audit metamorphic`: derived `source~transform` cases run beside their
  sources; relations `same_state`, `same_actions`, `same_output`; transforms trusted by labels.
- `vocabulary`: the names the command line offers (faults, verdicts, relations, transforms) without
  importing the audits.
- `replay`: what both replays share: the recorded episodes, the method's context for them, and a
  client stack whose prefix answers come from the run's paid answers.

Replays go through the same episode loop, client stack and journal as a run: their calls are priced,
budgeted and journaled under the audit's id (named by run, spec and code version), and an interrupted
audit resumes, skipping the cases it has journaled.

Arrows: audits -> schedule (the episode loop), models, stats, cost, config, display, journal, providers,
common.
"""

"""What a sweep is before it runs: its settings, its methods, its plan, and the dataset it runs on.

- `settings`: `SweepConfig` from flags or a sweep file, checked where it enters, hashed for resume.
- `methods`: the sweep's methods by spec (`--methods`, `[methods.NAME]` tables), each resolved.
- `method_provenance`: where each method came from, journaled; resume refuses a changed source.
- `prices`, `endpoint_keys`: the schema of `[prices."<model>"]` and `[endpoints.NAME]` tables.
- `plan`: streams (model, method, scenario, replica) and their units, with ids that make reruns safe.
- `fit`: the scenarios a dataset has; `run_dataset`: the dataset a journaled run ran on, unchanged.

Arrows: config -> journal, common, workers (a user's method is resolved in a worker,
`runner.workers.resolve`). Nothing here sends a call or drives a run.
"""

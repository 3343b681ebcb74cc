"""The dataset a journaled run ran on, loaded again for a command that reads the run (verify, gate,
audits, `state`'s oracle bulletins) and refused with one line when it changed since: a re-grade, a
replay or a bulletin from other data would describe a run that never happened. `resume` refuses the
same way, naming the files that changed (`check_same_dataset`)."""

from __future__ import annotations

from pathlib import Path

from runner.config.settings import config_from_json
from runner.journal import RunRow
from simulators.dataset import Dataset, file_hashes, load_dataset
from simulators.errors import ShiftbenchInputError

__all__ = ["check_same_dataset", "dataset_of_run"]


def dataset_of_run(row: RunRow, then: str) -> Dataset:
    """The scenarios the run's config names, from the path it recorded; `then` finishes the refusal's
    sentence ("restore it to verify the run")."""
    dataset = load_dataset(row.dataset_path, only=config_from_json(row.config).scenarios)
    if dataset.fingerprint != row.dataset_fingerprint:
        raise ShiftbenchInputError(f"{row.dataset_path}: the dataset changed since run {row.run_id} (fingerprint "
                                   f"{dataset.fingerprint[:12]}, the run used {row.dataset_fingerprint[:12]}); "
                                   f"{then}")
    return dataset


def check_same_dataset(run_id: str, path: str, before: dict[str, str], fingerprint: str, now: Dataset) -> None:
    """Resume's refusal of a changed dataset, naming the files that changed."""
    if now.fingerprint == fingerprint:
        return
    after = file_hashes(Path(path))
    changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
    listed = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    raise ShiftbenchInputError(f"{path}: the dataset changed since run {run_id} started ({listed}); "
                               "resume refuses a changed dataset: restore it or start a new run")

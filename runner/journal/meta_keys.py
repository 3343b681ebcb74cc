"""Where facts about a run live in the journal's `meta` table: one key per fact, named by the run.

`run:<id>:machine` the machine the run started on; `run:<id>:served:<json pair>` each model version a
provider said answered one of the run's calls (model names may hold ':', so the pair is JSON).
"""

from __future__ import annotations

import orjson

__all__ = ["machine_meta_key", "served_model_from_key", "served_model_meta_key", "served_models_prefix"]


def machine_meta_key(run_id: str) -> str:
    return f"run:{run_id}:machine"


def served_models_prefix(run_id: str) -> str:
    return f"run:{run_id}:served:"


def served_model_meta_key(run_id: str, model: str, served: str) -> str:
    """A model the provider said answered one of the run's calls (model names may hold ':', so the pair
    is JSON)."""
    return served_models_prefix(run_id) + orjson.dumps([model, served]).decode()


def served_model_from_key(run_id: str, key: str) -> tuple[str, str] | None:
    try:
        model, served = orjson.loads(key.removeprefix(served_models_prefix(run_id)))
    except (ValueError, TypeError):
        return None
    return str(model), str(served)

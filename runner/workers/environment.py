"""The environment a worker starts with: named variables only, never the runner's secrets.

The runner's environment holds API keys (OPENAI_API_KEY, ANTHROPIC_API_KEY, a provider's own), and a
method is a guest: it gets the variables below, read from the runner's environment where set, and the
ones the user names with `--method-env NAME` (a sweep file's `method_env`). Nothing else crosses, and
the fork server that starts workers is itself started with this environment, so no secret is in its
memory to be inherited either. HOME and TMPDIR are the worker's scratch folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["PASSED", "worker_environment"]

PASSED = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
          "LC_MESSAGES", "TZ", "PYTHONHASHSEED", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE",
          "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TOKENIZERS_PARALLELISM")
"""Locale, time zone, Python's text settings and the thread counts of numeric libraries."""

def worker_environment(extra: Iterable[str] = (), source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The named variables of `source` (the runner's environment) that are set."""
    values = os.environ if source is None else source
    return {name: values[name] for name in (*PASSED, *extra) if name in values}

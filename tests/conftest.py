from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def built_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in suite (seed 0), built once per test session."""
    from simulators.suite import build_suite

    root = tmp_path_factory.mktemp("suite") / "seed-0"
    build_suite(root, seed=0)
    return root


@pytest.fixture(autouse=True)
def _natural_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output laid out at its natural width (as in a pipe) unless a test sets COLUMNS itself: the report
    and `runs` fit COLUMNS when it is set (runner.common.tables), and a worker may inherit or be given one
    by a library, which would change what a test reads line by line."""
    monkeypatch.delenv("COLUMNS", raising=False)

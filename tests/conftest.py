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

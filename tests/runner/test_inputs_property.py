"""Property: any sweep file or flags either runs or ends with one line and exit code 2, and touches no
file outside the journal and the suite's folder."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from runner.cli import main

NUMERIC_KEYS = ("seed", "block_size", "concurrency", "model_concurrency", "pilot", "budget", "max_tokens",
                "max_request_attempts", "max_episode_attempts", "breaker_failures", "endpoint_down_after_s",
                "max_turns", "temperature", "call_timeout")
ENDPOINT_KEYS = ("max_concurrency", "requests_per_minute", "tokens_per_minute", "stream", "max_tokens",
                 "thinking_budget", "extra_body", "model", "kind")
FLAGS = ("--budget", "--concurrency", "--model-concurrency", "--max-tokens", "--pilot", "--block-size", "--seed",
         "--max-turns", "--temperature", "--call-timeout")

values = st.one_of(
    st.integers(-3, 6), st.integers(min_value=2**31, max_value=2**62), st.integers(max_value=-(2**31)),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.5, 1e-300, 1e300]),
    st.text(alphabet="abcx0123-. ", max_size=4), st.booleans(), st.lists(st.integers(0, 3), max_size=2),
)
flag_values = st.one_of(st.sampled_from(["nan", "inf", "-inf", "0", "-1", "1", "2", "1e400", "0x10", ""]),
                        st.text(alphabet="abc0123456789-.e", min_size=1, max_size=5))


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(value)


@st.composite
def sweeps(draw: st.DrawFn, suite: str) -> tuple[str, list[str]]:
    """A small valid sweep (one scenario, a pilot of one) with some fields replaced by anything."""
    fields: dict[str, Any] = {"models": ["scripted"], "methods": ["blind"], "scenarios": ["banking_l1"],
                              "dataset": suite, "pilot": 1}
    for key in draw(st.lists(st.sampled_from(NUMERIC_KEYS), max_size=3, unique=True)):
        fields[key] = draw(values)
    lines = [f"{key} = {toml_value(value)}" for key, value in fields.items()]
    endpoint = draw(st.dictionaries(st.sampled_from(ENDPOINT_KEYS), values, max_size=2))
    if draw(st.booleans()):
        lines[0] = 'models = ["local"]'
        table = {"kind": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1", **endpoint}
        lines += ["[endpoints.local]", *(f"{key} = {toml_value(value)}" for key, value in table.items())]
    flags: list[str] = []
    for flag in draw(st.lists(st.sampled_from(FLAGS), max_size=2, unique=True)):
        flags += [flag, draw(flag_values)]
    return "\n".join(lines) + "\n", flags


def snapshot(root: Path, ignore: tuple[str, ...]) -> dict[str, tuple[int, bytes | None]]:
    found: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if not name.startswith(ignore):
            found[name] = (path.stat().st_mode, path.read_bytes() if path.is_file() else None)
    return found


@contextmanager
def working_in(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def suite_path(built_suite: Path) -> str:
    return str(built_suite)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_sweep_file_or_flags_runs_or_ends_with_one_line_and_exit_2(
    data: st.DataObject, suite_path: str, tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-property")
    text, flags = data.draw(sweeps(suite_path))
    home = tmp_path_factory.mktemp("home")
    (home / "notes.txt").write_text("the user's own file")
    (home / "sweep.toml").write_text(text)
    journal = home / "j.sqlite"
    before = snapshot(home, ignore=("j.sqlite",))
    capsys.readouterr()
    with working_in(home):
        try:
            code = main(["run", "--config", "sweep.toml", "--journal", str(journal), "--display", "none", *flags])
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
    err = capsys.readouterr().err.strip().splitlines()
    event(f"exit code {code}")
    assert code in (0, 2), (text, flags, err)
    if code == 2:
        assert len(err) == 1 and err[0].startswith("shiftbench: error: "), (text, flags, err)
        assert not journal.exists()
    # Nothing outside the journal (and its -wal/-shm files) is created or changed; the dataset is given,
    # so no suite is built either.
    assert snapshot(home, ignore=("j.sqlite",)) == before

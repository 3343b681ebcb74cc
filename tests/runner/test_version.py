"""The code's version tells commits apart (issue 21 item 7): a checkout gives its commit (a dirty tree a
marker and a hash of the source as it is), an installed copy a hash of its installed source; runs,
locked plans, audit ids, `--version` and reports carry it, and an old run's report keeps the version
that run stored. The checkouts here are real git repositories of a copy of the source."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import orjson
import pytest

from runner.audits.replay import audit_id_for
from runner.cli import main
from runner.common.version import SOURCE_PACKAGES, code_version
from tests.support import cli_sweep

TOP = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def _copy_source(into: Path) -> Path:
    into.mkdir()
    for package in SOURCE_PACKAGES:
        shutil.copytree(TOP / package, into / package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", ".gitignore"):
        shutil.copy(TOP / name, into / name)
    return into


def _version_of(root: Path) -> str:
    """code_version() as a process importing the packages from `root` computes it."""
    script = "from runner.common.version import code_version; print(code_version())"
    done = subprocess.run([sys.executable, "-c", script],
                          cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


def _git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_two_commits_and_a_dirty_tree_never_look_alike(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed here")
    root = _copy_source(tmp_path / "checkout")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    first = _version_of(root)
    assert first.endswith(f"+g{_git(root, 'rev-parse', 'HEAD')[:12]}"), first
    tool = root / "runner" / "common" / "version.py"
    tool.write_text(tool.read_text() + "\n# a change not committed\n")
    dirty = _version_of(root)
    assert dirty.startswith(first + ".dirty.") and dirty != first
    tool.write_text(tool.read_text() + "# another\n")
    assert _version_of(root) not in (first, dirty)  # two dirty trees of one commit differ too
    _git(root, "commit", "-q", "-am", "two")
    second = _version_of(root)
    assert second.endswith(f"+g{_git(root, 'rev-parse', 'HEAD')[:12]}") and second != first


def test_an_installed_copy_is_named_by_a_hash_of_its_source(tmp_path: Path) -> None:
    root = _copy_source(tmp_path / "site-packages")
    installed = _version_of(root)
    assert "+src." in installed
    (root / "methods" / "registry.py").write_text((root / "methods" / "registry.py").read_text() + "\n")
    assert _version_of(root) != installed and "+src." in _version_of(root)


def test_version_runs_reports_plans_and_audits_carry_the_commit(built_suite: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    version = code_version()
    assert "+g" in version or "+src." in version
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == f"shiftbench {version}\n"
    journal, run_id = cli_sweep(built_suite, tmp_path, ("banking_l1",), ("blind",))
    capsys.readouterr()
    assert main(["report", run_id, "--json", "--journal", str(journal)]) == 0
    provenance = orjson.loads(capsys.readouterr().out)["provenance"]
    assert (provenance["code_version"], provenance["report_code_version"]) == (version, version)
    assert audit_id_for(run_id, "faults", {}) != audit_id_for(run_id, "faults", {"other": 1})

    plan = tmp_path / "PLAN.toml"
    plan.write_text('[plan]\ncomparison = ["scripted/blind", "scripted/oracle"]\nmetric = "avg_h"\nthreshold = 0\n'
                    f'test = "sign_test"\n[sweep]\nmethods = ["blind", "oracle"]\nscenarios = ["banking_l1"]\n'
                    f'pilot = 1\ndataset = "{built_suite}"\n')
    assert main(["lock", str(plan)]) == 0
    capsys.readouterr()
    assert tomllib.loads(plan.read_text())["lock"]["code_version"] == version
    from runner.evidence.plans import read_plan

    _, locked = read_plan(plan)
    assert locked is not None
    summary = locked.summary()
    assert summary["file"] == str(plan.resolve()) and Path(summary["file"]).is_absolute()
    assert summary["file_sha256"] == hashlib.sha256(plan.read_bytes()).hexdigest()


def test_an_old_runs_report_keeps_the_version_it_stored(built_suite: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = cli_sweep(built_suite, tmp_path, ("banking_l1",), ("blind",))
    db = sqlite3.connect(journal)  # a run journaled by a version that knew only its release number
    try:
        db.execute("UPDATE runs SET code_version = '0.1.0'")
        db.commit()
    finally:
        db.close()
    capsys.readouterr()
    assert main(["report", run_id, "--journal", str(journal)]) == 0
    assert f"provenance: code 0.1.0 (this report: {code_version()})" in capsys.readouterr().out
    assert main(["report", run_id, "--json", "--journal", str(journal)]) == 0
    assert orjson.loads(capsys.readouterr().out)["provenance"]["code_version"] == "0.1.0"

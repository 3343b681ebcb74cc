"""A method's source hash is its bytes' sha256 (a file) or the documented digest of a package's files: the
same bytes give the same hash anywhere, and `sha256sum` (docs/methods.md's one-liners) reproduces it.
A journal written before the scheme was journaled still resumes: its hashes are compared by the older one."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from methods.source import legacy_source_hash
from methods.spec import resolve_method
from runner.config.method_provenance import check_methods_unchanged, method_meta_key
from runner.journal import Batch, open_journal
from simulators.errors import ShiftbenchInputError
from tests.methods.test_method_specs import NOTES_FILE

PACKAGE_DIGEST = ("find . -name '*.py' -not -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z "
                  "| xargs -0 sha256sum | sha256sum")
"""docs/methods.md's command for a package's hash, run in the package's folder."""


def test_a_files_hash_is_its_sha256_wherever_it_sits_and_whatever_its_name(tmp_path: Path) -> None:
    elsewhere = tmp_path / "deep" / "tuned.py"
    elsewhere.parent.mkdir()
    shutil.copy(NOTES_FILE, elsewhere)
    here, there = resolve_method(f"{NOTES_FILE}:NOTES").source, resolve_method(f"{elsewhere}:NOTES").source
    assert here.source_sha256 == there.source_sha256 == hashlib.sha256(NOTES_FILE.read_bytes()).hexdigest()
    printed = subprocess.run(["sha256sum", str(elsewhere)], capture_output=True, text=True, check=True).stdout
    assert printed.split()[0] == there.source_sha256 and there.source_scheme == "sha256sum"


def test_a_packages_hash_is_the_documented_digest_and_moves_with_its_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site" / "mypkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    # Names whose order differs between path-part order and byte order ('a.py' < 'a/b.py' by parts).
    (package / "a.py").write_text("from methods.base import MethodSpec\n")
    (package / "a").mkdir()
    (package / "a" / "__init__.py").write_text("")
    (package / "a" / "b.py").write_text("X = 1\n")
    shutil.copy(NOTES_FILE, package / "sub" / "notes.py")
    (package / "sub" / "__init__.py").write_text("")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "stale.py").write_text("ignored\n")
    monkeypatch.syspath_prepend(str(package.parent))
    source = resolve_method("mypkg.sub.notes:NOTES").source
    by_shell = subprocess.run(PACKAGE_DIGEST, shell=True, cwd=package, capture_output=True, text=True, check=True)
    assert (source.source_sha256, source.source_files) == (by_shell.stdout.split()[0], 6)


def test_a_registry_package_is_hashed_as_the_documented_command_hashes_its_folder() -> None:
    tabular = resolve_method("tabular").source
    folder = Path(__file__).parents[2] / "methods" / "tabular"
    by_shell = subprocess.run(PACKAGE_DIGEST, shell=True, cwd=folder, capture_output=True, text=True, check=True)
    assert tabular.source_sha256 == by_shell.stdout.split()[0]


def old_style_entry(source_target: Path, legacy: str) -> dict[str, object]:
    """A provenance entry as shiftbench journaled it before `source_scheme`: the file's name in its hash."""
    return {"origin": "file", "target": f"{source_target}:NOTES", "source_sha256": legacy, "source_files": 1}


async def test_a_journal_hashed_by_the_older_scheme_resumes_unchanged_and_names_the_scheme_when_changed(
        tmp_path: Path) -> None:
    own = tmp_path / "notes.py"
    shutil.copy(NOTES_FILE, own)
    resolved = resolve_method(f"{own}:NOTES", name="tuned")
    legacy = hashlib.sha256(b"notes.py\0" + own.read_bytes() + b"\0").hexdigest()  # the older scheme by hand
    assert legacy_source_hash(resolved.source) == legacy != resolved.source.source_sha256
    async with open_journal(tmp_path / "j.sqlite") as journal:
        meta = orjson.dumps({"tuned": old_style_entry(own, legacy)}).decode()
        await journal.commit(Batch().set_meta(method_meta_key("R"), meta))
        assert (await check_methods_unchanged(journal.read, "R", {"tuned": resolved}, accept=False)).names == ()
        own.write_text(own.read_text() + "\n# tuned\n")
        edited = resolve_method(f"{own}:NOTES", name="tuned")
        with pytest.raises(ShiftbenchInputError, match=r"method 'tuned' changed since the run began \(its hash "
                                                         r"then by shiftbench's older, path-dependent scheme\)"):
            await check_methods_unchanged(journal.read, "R", {"tuned": edited}, accept=False)
        accepted = await check_methods_unchanged(journal.read, "R", {"tuned": edited}, accept=True)
        await journal.commit(accepted.journal(Batch(), "R"))
        (change,) = orjson.loads(accepted.accepted)
        assert (change["before"], change["after"], change["scheme"]) == (
            legacy, edited.source.source_sha256, "sha256sum")
        # Later resumes compare by the scheme the accepted change was recorded with.
        assert (await check_methods_unchanged(journal.read, "R", {"tuned": edited}, accept=False)).names == ()

"""Methods from outside the project: found by module, file or entry point, configured by typed options,
named as the user chooses, and described by where they came from and the hash of their source."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

import pytest

from methods.base import MethodSetup
from methods.spec import absolute_spec, resolve_method
from simulators.errors import ShiftbenchInputError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "notes_method"
NOTES_FILE = EXAMPLE / "shiftbench_notes" / "notes.py"


def installed_example(site: Path) -> Path:
    """The example package as an installed distribution: its files and a dist-info with its entry point,
    in a folder on the import path (what `pip install` leaves, without the minutes of a build)."""
    shutil.copytree(EXAMPLE / "shiftbench_notes", site / "shiftbench_notes")
    info = site / "shiftbench_notes-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shiftbench-notes\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text('[shiftbench.methods]\nnotes = shiftbench_notes.notes:NOTES\n')
    (info / "top_level.txt").write_text("shiftbench_notes\n")
    return site


def test_a_file_spec_resolves_to_its_method_with_options_checked_and_its_source_hashed() -> None:
    resolved = resolve_method(f"{NOTES_FILE}:NOTES", {"keep": 3, "block_size": 4}, name="notes4")
    assert resolved.name == "notes4" and resolved.spec.name == "notes4"
    assert resolved.spec.block_size == 4
    assert resolved.options == {"keep": 3, "only_failures": False, "block_size": 4}
    source = resolved.source
    assert (source.origin, source.target) == ("file", f"{NOTES_FILE}:NOTES")
    assert source.source_files == 1 and len(source.source_sha256) == 64
    method = resolved.spec.build(MethodSetup(scenario="retail_l1", domain="retail"))
    assert method.state() == {"notes": []} and vars(method)["keep"] == 3


def test_the_same_method_installed_is_found_by_its_entry_point_and_as_a_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(installed_example(tmp_path)))
    by_entry_point = resolve_method("notes")
    assert by_entry_point.name == "notes"
    assert by_entry_point.source.origin == "entry_point"
    assert by_entry_point.source.target == "shiftbench_notes.notes:NOTES"
    assert by_entry_point.source.distribution == "shiftbench-notes 0.1.0"
    as_module = resolve_method("shiftbench_notes.notes:NOTES")
    assert as_module.source.origin == "module" and as_module.source.distribution == "shiftbench-notes 0.1.0"
    # A module in a package stands for its whole package tree: both files.
    assert as_module.source.source_files == 2 == by_entry_point.source.source_files
    assert as_module.source.source_sha256 == by_entry_point.source.source_sha256


def test_a_registry_method_is_hashed_over_its_own_module() -> None:
    rag, tabular = resolve_method("rag"), resolve_method("tabular")
    assert (rag.source.origin, rag.source.target, rag.source.source_files) == ("registry", "methods.rag", 1)
    assert tabular.source.source_files > 1  # methods/tabular/ is one package
    assert rag.spec.block_size is None  # the sweep's block size


def test_editing_the_file_changes_its_hash(tmp_path: Path) -> None:
    copy = tmp_path / "notes.py"
    shutil.copy(NOTES_FILE, copy)
    before = resolve_method(f"{copy}:NOTES").source.source_sha256
    copy.write_text(copy.read_text() + "\n# tuned\n")
    after = resolve_method(f"{copy}:NOTES")
    assert after.source.source_sha256 != before


def test_a_relative_file_is_kept_absolute_against_where_it_was_named(tmp_path: Path) -> None:
    assert absolute_spec("./notes.py:NOTES", tmp_path) == f"{tmp_path / 'notes.py'}:NOTES"
    assert absolute_spec("slb:sub/ref.py:RAG", tmp_path) == f"slb:{tmp_path / 'sub' / 'ref.py'}:RAG"
    assert absolute_spec("mypkg.notes:NOTES", tmp_path) == "mypkg.notes:NOTES"
    assert absolute_spec("rag", tmp_path) == "rag"


@pytest.mark.parametrize(("options", "expected"), [
    ({"kep": 3}, "unknown option 'kep' (did you mean 'keep'?); it takes keep (int, default 8, 1..1000)"),
    ({"keep": "three"}, "option 'keep' must be a whole number, got 'three'"),
    ({"keep": True}, "option 'keep' must be a whole number, got True"),
    ({"keep": 0}, "option 'keep' must be between 1 and 1000, got 0"),
    ({"only_failures": 1}, "option 'only_failures' must be true or false, got 1"),
])
def test_options_are_typed_and_checked(options: dict[str, object], expected: str) -> None:
    with pytest.raises(ShiftbenchInputError) as caught:
        resolve_method(f"{NOTES_FILE}:NOTES", options, where="sweep.toml [methods.n]")
    assert str(caught.value).startswith("sweep.toml [methods.n]") and expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_registry_method_takes_no_options() -> None:
    with pytest.raises(ShiftbenchInputError, match=r"unknown option 'top_k'; it takes no options"):
        resolve_method("rag", {"top_k": 4})


def test_installed_distributions_are_read_once_per_import_path(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading them parses every installed package's metadata; a run resolves its methods several times."""
    reads: list[int] = []
    real = metadata.packages_distributions

    def counted() -> Mapping[str, list[str]]:
        reads.append(1)
        return real()
    monkeypatch.setattr(metadata, "packages_distributions", counted)
    monkeypatch.syspath_prepend(str(tmp_path / "empty"))  # an import path no earlier test resolved on
    first = [resolve_method(name).source for name in ("rag", "tabular", "rag")]
    assert len(reads) == 1 and first[0] == first[2]
    monkeypatch.syspath_prepend(str(installed_example(tmp_path)))  # a folder put on the path is seen
    assert resolve_method("shiftbench_notes.notes:NOTES").source.distribution == "shiftbench-notes 0.1.0"
    assert len(reads) == 2

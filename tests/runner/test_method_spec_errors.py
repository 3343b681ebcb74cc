"""A broken method spec, on the command line or in a sweep file: one line naming the flag or file and
what is wrong, exit 2, and no journal written."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli import main
from tests.runner.test_cli_errors import one_error_line

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "notes_method" / "shiftbench_notes" / "notes.py"

PLANTED = {
    "raises.py": "import os\nVALUE = os.environ['SHIFTBENCH_NO_SUCH_VARIABLE']\n",
    "syntax.py": "def broken(:\n    pass\n",
    "shapes.py": (
        "def NOT_A_METHOD():\n    return None\n\n"
        "class Reference:\n    learns = True\n    def setup(self, bundle): pass\n"
        "    def context(self, task, phase, window): return ''\n    def update(self, results): pass\n\n"
        "class Fussy:\n    def __init__(self, size: int = 3):\n        raise ValueError('size is wrong')\n"
        "    def setup(self, bundle): pass\n"
        "    def context(self, task, phase, window): return ''\n    def update(self, results): pass\n"),
}


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    folder = tmp_path / "planted"
    folder.mkdir()
    for name, text in PLANTED.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize(("spec", "expected"), [
    ("./nowhere.py:NOTES", "--methods: no file {cwd}/nowhere.py"),
    ("no_such_package_xyz.notes:NOTES", "no module named 'no_such_package_xyz'; install the package or put"),
    ("{planted}/raises.py:X", "importing {planted}/raises.py failed at {planted}/raises.py:2: KeyError"),
    ("{planted}/syntax.py:X", "importing {planted}/syntax.py failed at {planted}/syntax.py:1: SyntaxError"),
    ("{example}:NOTE", "has no 'NOTE' (did you mean 'NOTES'?); its MethodSpecs: NOTES"),
    ("{planted}/shapes.py:NOT_A_METHOD", "is a function (NOT_A_METHOD), not a MethodSpec; export a methods.base"),
    ("{planted}/shapes.py:Reference", "is the class Reference, not a MethodSpec; a class of the reference's "
                                      "interface runs as slb:"),
    ("slb:{example}:NOTES", "is not a class of the reference's Method interface (it needs setup(bundle)"),
    ("slb:{planted}/shapes.py:Fussy", "Fussy(...) failed: ValueError: size is wrong"),
    ("slb:{planted}/shapes.py", "names no class; write slb:module:Class"),
    ("notess", "unknown method 'notess'"),
    ("notes", "unknown method 'notes' (the guide's example registers the entry point 'notes' once installed: "
              "pip install -e examples/notes_method)"),
    ("{example}", "{example} names a file but no method in it; its MethodSpecs: NOTES; write {example}:NOTES"),
    ("{planted}/shapes.py", "it has no MethodSpec, but classes of the reference's interface: write "
                            "slb:{planted}/shapes.py:Fussy"),
    ("bad name=rag", "method name 'bad name' must be 1-64 letters"),
    ("rag,rag=rag_recency", "two methods named 'rag' (rag, rag=rag_recency)"),
])
def test_a_broken_spec_on_the_command_line(spec: str, expected: str, planted: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    names = {"planted": planted, "example": EXAMPLE, "cwd": tmp_path}
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--methods", spec.format(**names), "--journal", str(journal), "--display", "none"]) == 2
    line = one_error_line(capsys)
    assert "--methods" in line or "flags" in line, line
    assert expected.format(**names) in line, line
    assert not journal.exists()


@pytest.mark.parametrize(("table", "expected"), [
    ('[methods.n]\nfrom = "{example}:NOTES"\n[methods.n.options]\nkep = 3\n',
     "[methods.n] ({example}:NOTES): unknown option 'kep' (did you mean 'keep'?)"),
    ('[methods.n]\nfrom = "{example}:NOTES"\n[methods.n.options]\nkeep = "many"\n',
     "option 'keep' must be a whole number, got 'many'"),
    ('[methods.n]\nform = "rag"\n', "[methods.n]: unknown key 'form' (did you mean 'from'?)"),
    ('[methods.n]\nfrom = 3\n', "[methods.n]: from must be a method spec string"),
    ('[sweep]\nmethods = ["blind"]\n[methods.n]\nfrom = "rag"\n',
     "[methods.n] is defined but [sweep] methods does not list it"),
])
def test_a_broken_method_table_in_a_sweep_file(table: str, expected: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(table.format(example=EXAMPLE))
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--config", str(sweep), "--journal", str(journal), "--display", "none"]) == 2
    line = one_error_line(capsys)
    assert str(sweep) in line and expected.format(example=EXAMPLE) in line, line
    assert not journal.exists()

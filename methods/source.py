"""Where a method came from, exactly enough that a published number names the code behind it.

A `MethodSource` says how the spec was found (registry, module, file, entry point, the reference
adapter), what it points at, and a sha256 of the source: the file for a file, the whole top-level
package tree (every `.py` below it) for a module in a package, the module's own file otherwise. For a
shiftbench method the hash covers its module (or its subpackage, `methods/tabular/`); the rest of
shiftbench is the run's code version. An installed package adds its distribution and version.

The hash depends on the bytes alone, never on where they sit, so a reader can check a published one
(docs/methods.md has the commands): a file's is `sha256sum FILE`; a package's is the sha256 of the
`sha256sum` lines of its `.py` files, named `./RELATIVE/PATH` from the package's folder and sorted
bytewise. Journals written before this scheme (no `source_scheme` in their provenance) hashed file names
with the bytes; `legacy_source_hash` recomputes that one so their resumes still compare like with like.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType

from simulators.protocol import JSON

__all__ = ["SOURCE_SCHEME", "MethodSource", "distribution_of", "legacy_source_hash", "source_hash"]

SOURCE_SCHEME = "sha256sum"
"""The hash scheme journaled beside each hash; a provenance entry without one used `legacy_source_hash`."""

ORIGINS = ("registry", "module", "file", "entry_point", "adapter")
"""How a spec was found; `adapter`: a class of the reference's interface (`slb:...`), from a module or file."""


@dataclass(frozen=True)
class MethodSource:
    origin: str
    """One of ORIGINS."""
    spec: str
    """The spec as the run recorded it (a file's path made absolute)."""
    target: str
    """What it resolved to: `module:NAME`, `/abs/file.py:NAME`, an entry point's value."""
    source_sha256: str
    source_files: int
    distribution: str = ""
    """`name version` of the installed package that holds it, if any."""
    source_scheme: str = SOURCE_SCHEME

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)


def source_hash(module: ModuleType, registry: bool = False) -> tuple[str, int]:
    """(sha256, number of files) of the code a method's module stands for: `sha256sum` of a lone file;
    for a package, the sha256 of its files' `sha256sum` lines (`HEX  ./rel/path.py`, sorted bytewise)."""
    root, files = _source_files(module, registry)
    if root is None:
        return hashlib.sha256(files[0].read_bytes() if files else b"").hexdigest(), len(files)
    # `find . -name '*.py' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum`: names sorted as
    # strings sort as their UTF-8 bytes do.
    named = sorted((f"./{path.relative_to(root).as_posix()}", path) for path in files)
    lines = "".join(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {name}\n" for name, path in named)
    return hashlib.sha256(lines.encode()).hexdigest(), len(files)


def legacy_source_hash(source: MethodSource) -> str:
    """The hash an older shiftbench journaled for this source (each file's name, relative to the files'
    common folder, hashed with its bytes), recomputed from the files the source resolves to now."""
    where = source.target.rsplit(":", 1)[0]
    if where.endswith(".py"):  # a file, or a reference class in a file: the file alone
        files = [Path(where)] if Path(where).is_file() else []
    else:
        module = sys.modules.get(source.target if source.origin == "registry" else where)
        files = _source_files(module, source.origin == "registry")[1] if module is not None else []
    digest = hashlib.sha256()
    root = _common_root(files)
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def distribution_of(module: ModuleType) -> str:
    """`name version` of the distribution whose files hold the module's top-level package; "" if none."""
    top = module.__name__.split(".")[0]
    names = _distributions_by_package(tuple(sys.path)).get(top, [])
    for name in names:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return ""


@functools.lru_cache(maxsize=4)
def _distributions_by_package(import_path: tuple[str, ...]) -> Mapping[str, list[str]]:
    """Top-level package -> the distributions that hold it, for this import path. Reading it parses every
    installed distribution's metadata (0.1-0.2 s, more in a large environment), and a run resolves its
    methods several times: once per import path is enough (a folder put on the path is seen)."""
    return metadata.packages_distributions()


def _source_files(module: ModuleType, registry: bool) -> tuple[Path | None, list[Path]]:
    """(the package folder the paths are named from, or None for a lone file; the files)."""
    own = Path(module.__file__ or "")
    if not own.is_file():
        return None, []
    parts = module.__name__.split(".")
    is_package = own.name == "__init__.py"
    if registry:
        # methods/rag.py alone; methods/tabular/retail.py stands for the methods/tabular/ package.
        return (own.parent, _tree(own.parent)) if is_package or len(parts) > 2 else (None, [own])
    if len(parts) == 1 and not is_package:
        return None, [own]  # a single-file module
    top = own.parent
    for _ in range(len(parts) - (1 if is_package else 2)):
        top = top.parent
    return top, _tree(top)


def _tree(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _common_root(files: list[Path]) -> Path:
    if not files:
        return Path("/")
    root = files[0].parent
    while not all(root in f.parents for f in files):
        root = root.parent
    return root

"""`data fetch`: download the official ServeLearnBench export, verify it, write it atomically.

The export is the `dataset/` folder of the reference repository at a pinned commit, taken from the
repository's public source archive (a `.tar.gz` whose single top folder holds `dataset/`). The
archive URL is a template with `{repo}` and `{commit}`; `--url` or `SHIFTBENCH_FETCH_URL` overrides
it (a mirror, or a test's loopback server).

Verification, in order: the archive holds a `dataset/` folder of regular files only (no absolute
paths, no `..`, no links); it loads as a dataset; `data check --gold` passes (no dangling ids, every
gold scores 1.0); its fingerprint (`simulators.dataset.fingerprint`) equals the one recorded for the
commit in `KNOWN_FINGERPRINTS`. A mismatch is refused. A commit with no recorded fingerprint (any
`--ref` other than the pinned one, and the pinned one until a maintainer records it) is written and
its fingerprint printed, with a line saying it was not compared. Nothing is written unless every
check passes: the files go to a staging folder beside the target that replaces it in one rename.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import anyio
import httpx

from simulators.dataset import load_dataset
from simulators.errors import ShiftbenchInputError
from simulators.integrity import Problem, dangling_ids, gold_problems

__all__ = [
    "ARCHIVE_URL",
    "KNOWN_FINGERPRINTS",
    "OFFICIAL_REPOSITORY",
    "PINNED_COMMIT",
    "FetchOutcome",
    "FetchRefused",
    "fetch_official",
]

OFFICIAL_REPOSITORY = "Infini-AI-Lab/ServeLearnBench"
PINNED_COMMIT = "0102d861a97f4ccca42ea4e6cf8e8a1670b7f5c2"
"""The commit whose `dataset/` folder is the official export shiftbench is checked against."""

KNOWN_FINGERPRINTS: dict[str, str] = {}
"""commit -> the fingerprint its export must have. The pinned commit's is not recorded yet: it was
never downloaded from a machine with network access. A maintainer runs `shiftbench data fetch` once,
checks the export, and records the printed fingerprint here; from then on a mismatch is refused."""

ARCHIVE_URL = "https://codeload.github.com/{repo}/tar.gz/{commit}"
URL_ENVIRONMENT = "SHIFTBENCH_FETCH_URL"
_MAX_ARCHIVE_BYTES = 2 * 1024**3


class FetchRefused(ShiftbenchInputError):
    """The archive could not be fetched or did not verify; nothing was written."""


@dataclass(frozen=True)
class FetchOutcome:
    target: Path
    commit: str
    fingerprint: str
    compared: bool
    """True when the fingerprint was checked against a recorded one."""


def archive_url(commit: str, template: str | None = None) -> str:
    chosen = template or os.environ.get(URL_ENVIRONMENT) or ARCHIVE_URL
    return chosen.format(repo=OFFICIAL_REPOSITORY, commit=commit)


def fetch_official(target: Path, commit: str = PINNED_COMMIT, url: str | None = None,
                   say: Callable[[str], None] = print) -> FetchOutcome:
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.fetch.", dir=target.parent))
    try:
        archive = staging / "archive.tar.gz"
        source = archive_url(commit, url)
        say(f"Downloading {source}")
        _download(source, archive)
        dataset = staging / "dataset"
        _extract_dataset(archive, dataset)
        archive.unlink()
        fingerprint = _verify(dataset, commit, say)
        _replace(target, dataset)
        return FetchOutcome(target, commit, fingerprint, commit in KNOWN_FINGERPRINTS)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _download(url: str, into: Path) -> None:
    try:
        with httpx.Client(timeout=httpx.Timeout(60.0, connect=15.0), follow_redirects=True) as client, \
                client.stream("GET", url) as response:
            if response.status_code != 200:
                raise FetchRefused(f"{url}: HTTP {response.status_code}; check --ref, --url or the network")
            size = 0
            with into.open("wb") as handle:
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > _MAX_ARCHIVE_BYTES:
                        raise FetchRefused(f"{url}: the archive is larger than {_MAX_ARCHIVE_BYTES} bytes")
                    handle.write(chunk)
    except httpx.HTTPError as exc:
        raise FetchRefused(f"{url}: download failed ({exc}); check --url or the network") from exc


def _dataset_path(member: tarfile.TarInfo) -> PurePosixPath | None:
    """The member's path inside `dataset/` (after the archive's top folder), or None if elsewhere.
    Refuses anything that could write outside the target or is not a plain file or folder."""
    parts = PurePosixPath(member.name).parts
    if member.name.startswith("/") or ".." in parts:
        raise FetchRefused(f"archive member {member.name!r} points outside the archive")
    if len(parts) < 3 or parts[1] != "dataset":
        return None
    if not (member.isfile() or member.isdir()):
        raise FetchRefused(f"archive member {member.name!r} is not a regular file or folder")
    return PurePosixPath(*parts[2:])


def _extract_dataset(archive: Path, into: Path) -> None:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            found = False
            for member in tar:
                inner = _dataset_path(member)
                if inner is None:
                    continue
                found = True
                path = into / inner
                if member.isdir():
                    path.mkdir(parents=True, exist_ok=True)
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                if source is None:
                    raise FetchRefused(f"archive member {member.name!r} cannot be read")
                with source, path.open("wb") as handle:
                    shutil.copyfileobj(source, handle)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise FetchRefused(f"the downloaded archive is not a readable .tar.gz ({exc})") from exc
    if not found:
        raise FetchRefused("the archive holds no dataset/ folder; is --url an archive of the reference repository?")


def _verify(dataset: Path, commit: str, say: Callable[[str], None]) -> str:
    loaded = load_dataset(dataset)
    problems: list[Problem] = []
    for scenario in loaded.scenarios.values():
        problems += dangling_ids(scenario)
        problems += anyio.run(gold_problems, scenario)
    if problems:
        shown = "; ".join(p.line() for p in problems[:3])
        raise FetchRefused(f"the export of {commit} fails `data check --gold` on {len(problems)} task(s): {shown}")
    expected = KNOWN_FINGERPRINTS.get(commit)
    if expected is not None and loaded.fingerprint != expected:
        raise FetchRefused(f"the export of {commit} has fingerprint {loaded.fingerprint}, but {expected} is "
                           "recorded for it (runner/datasets/official.py); refusing a changed or tampered download")
    if expected is None:
        say(f"No fingerprint is recorded for commit {commit}; the export was checked but its fingerprint not "
            "compared. Record it in runner/datasets/official.py KNOWN_FINGERPRINTS once verified.")
    return loaded.fingerprint


def _replace(target: Path, staged: Path) -> None:
    if target.exists():
        retired = target.with_name(f".{target.name}.old.{os.getpid()}")
        target.rename(retired)
        staged.rename(target)
        shutil.rmtree(retired)
    else:
        staged.rename(target)

"""A user's method resolved inside a worker: its code is imported there, never in the runner's process.

Resolving a spec imports the method's module, and a module's top level is code like any other: run in
the runner's process it would read the API keys, open a socket or start a process before any boundary
is in place. So the runner starts a worker (the same boundary, environment and limits as a run's), has
it resolve the spec (`resolve` request: import, find the MethodSpec, check the options, hash the source)
and gets back what the runner needs by value: the spec's flags, the checked options and the source.
The `ResolvedMethod` built from that cannot be built in the runner's process (its builder refuses);
the run builds it in its workers. `--methods-in-process` resolves in-process, as it runs.

What a worker may read of the method's code is found without importing it (`code_reads`): a file, or
the top package's folder of a module (found by `importlib.util.find_spec`, which runs none of it) and
its distribution's metadata.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
import orjson

from methods.base import MethodSetup, MethodSpec
from methods.entry_points import distribution_label, find_entry_point
from methods.loading import is_file_target
from methods.names import REGISTERED_METHODS
from methods.source import MethodSource
from methods.spec import ADAPTER_PREFIX, ResolvedMethod
from runner.workers.failure import MethodFailure
from runner.workers.limits import MethodLimits
from runner.workers.process import start_worker
from simulators.errors import ShiftbenchInputError
from simulators.protocol import JSON

__all__ = ["code_reads", "resolve_guest", "worker_target"]

_resolved: dict[tuple[object, ...], ResolvedMethod] = {}
"""Resolutions of this process, keyed by spec, options, name, reads, environment and the file's stat:
a run asks for its methods several times, and one worker each time would only repeat the answer."""
_lock = threading.Lock()


def worker_target(text: str) -> str:
    """The spec the worker resolves: an entry point by its value (module:NAME), since finding it by name
    reads the metadata of every import path entry, which a worker may not."""
    if text in REGISTERED_METHODS or ":" in text:
        return text
    point = find_entry_point(text)
    return point.value if point is not None else text


def code_reads(target: str) -> list[str]:
    """What a worker's method may read of its own code (`target` as `worker_target` gives it)."""
    body = target.removeprefix(ADAPTER_PREFIX)
    where = body.rsplit(":", 1)[0] if ":" in body else body
    if is_file_target(where):
        return [str(Path(where).expanduser().resolve())]
    top = where.split(".")[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    if found is None:
        return []
    if found.origin and found.origin not in ("built-in", "frozen", "namespace"):
        location = Path(found.origin).resolve()
        roots = [location.parent if location.name == "__init__.py" else location]
    else:
        roots = [Path(p).resolve() for p in found.submodule_search_locations or ()]
    return [*(str(r) for r in roots), *_metadata_of(top)]


def _metadata_of(top: str) -> list[str]:
    for dist in metadata.packages_distributions().get(top, []):
        try:
            files = metadata.distribution(dist).files or []
        except metadata.PackageNotFoundError:
            continue
        for file in files:
            if file.parts and file.parts[0].endswith(".dist-info"):
                return [str(Path(str(file.locate())).parent)]
    return []


def resolve_guest(text: str, options: Mapping[str, Any], where: str, name: str | None,
                  reads: Sequence[str] = (), env: Sequence[str] = ()) -> ResolvedMethod:
    """`text` resolved in a worker of its own (see the module's docstring); every refusal one line.
    Synchronous, for the config's callers: the worker is driven from a thread of its own, so a caller
    inside a running event loop can ask too."""
    key = (text, orjson.dumps(dict(options), option=orjson.OPT_SORT_KEYS), where, name, tuple(reads), tuple(env),
           _stat_of(text))
    with _lock:
        if key in _resolved:
            return _resolved[key]
    outcome: list[ResolvedMethod | BaseException] = []

    def drive() -> None:
        try:
            outcome.append(anyio.run(_resolve, text, dict(options), where, name, tuple(reads), tuple(env)))
        except BaseException as exc:  # carried back to the caller's thread
            outcome.append(exc)

    thread = threading.Thread(target=drive, name="shiftbench-resolve", daemon=True)
    thread.start()
    thread.join()
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    with _lock:
        _resolved[key] = result
    return result


def _stat_of(text: str) -> tuple[int, int] | None:
    body = text.removeprefix(ADAPTER_PREFIX)
    where = body.rsplit(":", 1)[0] if ":" in body else ""
    if not where or not is_file_target(where):
        return None
    try:
        stat = os.stat(where)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


async def _resolve(text: str, options: dict[str, Any], where: str, name: str | None, reads: tuple[str, ...],
                   env: tuple[str, ...]) -> ResolvedMethod:
    target = worker_target(text)
    point = None if target == text else find_entry_point(text)
    chosen = name or (text if point is not None else None)
    limits = MethodLimits()
    worker = await start_worker((*code_reads(target), *reads), None, limits, env)
    try:
        said = await worker.request("resolve", {"op": "resolve", "spec": target, "options": options, "where": where,
                                                "name": chosen}, limits.learn_s)
    except MethodFailure as failure:
        raise ShiftbenchInputError(f"{where}: resolving {text} in its worker failed: {failure}") from None
    finally:
        await worker.close()
    if "refused" in said:
        raise ShiftbenchInputError(str(said["refused"]))
    return _described(said, text, point)


def _described(said: Mapping[str, Any], text: str, point: metadata.EntryPoint | None) -> ResolvedMethod:
    source = MethodSource(**said["source"])
    if point is not None:
        source = MethodSource("entry_point", text, point.value, source.source_sha256, source.source_files,
                              distribution_label(point))
    name = str(said["name"])
    spec = MethodSpec(name, str(said["summary"]), bool(said["uses_model"]), build=_in_its_worker(name),
                      learns=bool(said["learns"]), sees_bulletin=bool(said["sees_bulletin"]),
                      block_size=said["block_size"], snapshot=said["snapshot"])
    values: dict[str, JSON] = dict(said["options"])
    return ResolvedMethod(name, spec, source, values)


def _in_its_worker(name: str) -> Any:
    def build(setup: MethodSetup) -> Any:
        raise RuntimeError(f"method '{name}' was resolved in a worker and is built only there (its code never "
                           "runs in the runner's process)")

    return build

"""A run's methods as journaled when it began, and `resume` refusing one whose source changed since.

`create_run` journals, per method, where it came from (registry, module, file, entry point, the
reference adapter), what it resolved to, its options, its learning and block size, and the sha256 of
its source (`methods.source`), in the meta row `run:<id>:methods`. A resume resolves the methods again
and compares the hashes (by the scheme each was journaled with: a journal from before
`source_scheme` was journaled is compared by the older, path-dependent hash, `legacy_source_hash`):
a changed source is refused, as an edited config is, unless the user passes
`--accept-method-change`; then each change (method, old and new hash, when) is appended to
`run:<id>:methods:accepted`, which reports show, and later resumes compare against the accepted source.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from runner.journal import Batch, Reader
from simulators.errors import ShiftbenchInputError

if TYPE_CHECKING:  # the reports read the journaled provenance without importing any method
    from methods.spec import ResolvedMethod

__all__ = ["ACCEPT_FLAG", "MethodChanges", "accepted_meta_key", "check_methods_unchanged", "method_meta_key",
           "method_lines", "methods_journaled", "stored_methods"]

ACCEPT_FLAG = "--accept-method-change"


def method_meta_key(run_id: str) -> str:
    return f"run:{run_id}:methods"


def accepted_meta_key(run_id: str) -> str:
    return f"run:{run_id}:methods:accepted"


def methods_journaled(batch: Batch, run_id: str, resolved: Mapping[str, ResolvedMethod]) -> Batch:
    """Add the run's methods' provenance to `batch` (the run's first transaction)."""
    payload = {name: method.provenance() for name, method in resolved.items()}
    return batch.set_meta(method_meta_key(run_id), orjson.dumps(payload).decode())


async def stored_methods(reader: Reader, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the methods as the run began, the source changes accepted since, oldest first); empty for a run
    journaled before methods had provenance."""
    began = await reader.meta(method_meta_key(run_id))
    accepted = await reader.meta(accepted_meta_key(run_id))
    return (orjson.loads(began) if began else {}), (orjson.loads(accepted) if accepted else [])


@dataclass(frozen=True)
class MethodChanges:
    names: tuple[str, ...] = ()
    accepted: str = ""
    """The accepted-changes meta value to journal (JSON list), "" when nothing changed."""

    def journal(self, batch: Batch, run_id: str) -> Batch:
        return batch.set_meta(accepted_meta_key(run_id), self.accepted) if self.accepted else batch


async def check_methods_unchanged(reader: Reader, run_id: str, resolved: Mapping[str, ResolvedMethod],
                                  accept: bool) -> MethodChanges:
    """Refuse a method whose source changed since the run began (or since its last accepted change); with
    `accept`, the changes to journal instead."""
    began, accepted = await stored_methods(reader, run_id)
    if not began:
        return MethodChanges()  # journaled before methods had provenance: nothing to compare
    expected = {name: (str(entry.get("source_sha256", "")), str(entry.get("source_scheme", ""))) for name, entry
                in began.items()}
    for change in accepted:
        expected[str(change["method"])] = (str(change["after"]), str(change.get("scheme", "")))
    changes = [(name, expected[name][0], method) for name, method in resolved.items()
               if name in expected and expected[name][0] != _current_hash(method, expected[name][1])]
    if not changes:
        return MethodChanges()
    if not accept:
        name, before, method = changes[0]
        more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
        older = "" if expected[name][1] else " (its hash then by shiftbench's older, path-dependent scheme)"
        raise ShiftbenchInputError(
            f"run {run_id}: method '{name}' changed since the run began{more}{older} (source {before[:12]} -> "
            f"{method.source.source_sha256[:12]}, {method.source.target}); resume refuses a changed method: restore "
            f"it, start a new run, or pass {ACCEPT_FLAG} to continue with the new code (the change is recorded)")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    recorded = accepted + [{"method": name, "before": before, "after": method.source.source_sha256,
                            "scheme": method.source.source_scheme, "target": method.source.target,
                            "accepted_at": now} for name, before, method in changes]
    return MethodChanges(tuple(name for name, _, _ in changes), orjson.dumps(recorded).decode())


def _current_hash(method: ResolvedMethod, scheme: str) -> str:
    """The method's hash now, by the scheme its journaled hash used: a journal from before schemes were
    journaled hashed file names too, and comparing it with today's hash would call every method changed."""
    if scheme:
        return method.source.source_sha256
    from methods.source import legacy_source_hash  # resolving the methods imported it already
    return legacy_source_hash(method.source)


_ORIGIN_WORDS = {"registry": "shiftbench", "module": "module", "file": "file", "entry_point": "entry point",
                 "adapter": "the reference's interface through the adapter,"}


def method_lines(methods: Mapping[str, Any], changes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(method name, where it came from) for a report: origin and target, distribution, source hash and
    files, options; then each accepted source change."""
    lines = []
    for name, entry in methods.items():
        origin = _ORIGIN_WORDS.get(str(entry.get("origin")), str(entry.get("origin")))
        dist = f" ({entry['distribution']})" if entry.get("distribution") else ""
        options = entry.get("options") or {}
        told = f", options {', '.join(f'{k}={v!r}' for k, v in options.items())}" if options else ""
        digest, files = str(entry.get("source_sha256", ""))[:12], _files(entry.get("source_files", 0))
        files += "" if entry.get("source_scheme") else ", older path-dependent hash"
        lines.append((name, f"{origin} {entry.get('target', '')}{dist}, source sha256 {digest} ({files}){told}"))
    for change in changes:
        lines.append((str(change["method"]), f"source changed, resumed with it at {change['accepted_at']} "
                                             f"(--accept-method-change): {str(change['before'])[:12]} -> "
                                             f"{str(change['after'])[:12]}"))
    return lines


def _files(count: object) -> str:
    return "1 file" if count == 1 else f"{count} files"

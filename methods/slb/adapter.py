"""A method written against the reference's interface, run as a shiftbench method.

The reference's `Method` is a class with `setup(bundle)`, `context(task, phase, window)`,
`update(results)`, `learns` and `block_size` (12 unless it says otherwise). `reference_spec` turns such
a class into a `MethodSpec` by its shape alone (the reference package is not imported): its
constructor's keyword arguments become the typed options of `[methods.NAME.options]`, and one instance
made at resolution says whether it learns and its block size, so plan and checks know them before a
run starts.

What the instance gets is what the reference gives it, and no more: `setup` once with a bundle of the
scenario's public face (`meta` with scenario, domain, tier and the acting system prompt; `policy_md`,
`workflow_md`; `tools`, the domain's tools without `finish`, each with `get_info()` and `name()`),
never rules, serving, test sets or an evaluator's field; `context` with the task view (task_id,
instruction with its timestamp line, ...), `"serving"` or `"test"` and the window, as the reference's
runner calls it; `update` after each block with `EpisodeResult`s in the reference's record format
(`methods.slb.record`). A class that sets
`uses_model = True` also finds `bundle["llm"]`, a synchronous client of the reference's `complete`
shape over the stream's metered client (`methods.slb.llm`); its `update` then runs in a worker thread.

It has no JSON state: its spec says `snapshot = "copy"`, so test sets get a deep copy made at the
window's end and a resume rebuilds it by replaying `update` on the journaled blocks, its model calls
answered from the journal. `state()` is a summary for `shiftbench state` (updates, episodes, the
instance's own `config()`), not something to load.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread

from methods.base import MethodSetup, MethodSpec, PublicScenario
from methods.options import BLOCK_SIZE, MethodOption, check_options
from methods.slb.llm import ReferenceLLM
from methods.slb.record import episode_result
from simulators.errors import ShiftbenchInputError
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["ReferenceAdapter", "ToolInfo", "reference_bundle", "reference_spec"]

REFERENCE_BLOCK_SIZE = 12
"""The reference's block size when a class does not set its own."""
_HOOKS = ("setup", "context", "update")
_KINDS = {"int": int, "float": float, "str": str, "bool": bool, int: int, float: float, str: str, bool: bool}


class ToolInfo:
    """A tool as the reference's bundle lists it, reading face only: its schema, never its backend."""

    def __init__(self, schema: Mapping[str, JSON]) -> None:
        self._schema = schema

    def get_info(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self._schema))

    def name(self) -> str:
        return str(self._schema["function"]["name"])


def reference_bundle(public: PublicScenario) -> dict[str, Any]:
    return {
        "meta": {"scenario": public.name, "domain": public.domain, "tier": public.tier,
                 "system_prompt": public.system_prompt},
        "policy_md": public.documents.get("policy", ""),
        "workflow_md": public.documents.get("workflow", ""),
        # The reference's bundle lists the domain's tools; `finish` is the agent loop's own.
        "tools": [ToolInfo(schema) for schema in public.tools if schema["function"]["name"] != "finish"],
    }


class ReferenceAdapter:
    """shiftbench's `Method` (and `Labelled`) over one instance of a reference-interface class."""

    def __init__(self, inner: Any, setup: MethodSetup, uses_model: bool) -> None:
        if setup.public is None:
            raise ValueError("a reference-interface method needs the scenario's public face")
        self._inner = inner
        self._tools = frozenset(ToolInfo(t).name() for t in setup.public.tools)
        self._bundle = reference_bundle(setup.public)
        self._threaded = uses_model
        if uses_model and setup.client is not None:
            self._bundle["llm"] = ReferenceLLM(setup.client, setup.public.domain)
        self.updates = 0
        self.episodes = 0
        inner.setup(self._bundle)

    def labelled_context(self, task: TaskView, phase: str, window: int) -> str:
        text = self._inner.context(task, phase, window)
        if text is None:
            return ""
        if not isinstance(text, str):
            raise TypeError(f"{type(self._inner).__name__}.context returned {type(text).__name__}, not str")
        return text

    def context(self, task: TaskView) -> str:
        """Without labels (a caller that has none): asked as a serving task of the first window."""
        return self.labelled_context(task, "serving", 0)

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        results = [episode_result(record, self._tools) for record in records]
        if self._threaded:  # its model calls block on the event loop from the worker thread
            await anyio.to_thread.run_sync(self._inner.update, results)
        else:
            self._inner.update(results)
        self.updates += 1
        self.episodes += len(results)

    def state(self) -> JSON:
        config = getattr(self._inner, "config", None)
        described = config() if callable(config) else {}
        return {"adapter": "servelearnbench", "class": type(self._inner).__qualname__, "updates": self.updates,
                "episodes": self.episodes, "config": described if _is_json(described) else repr(described)}

    def load(self, state: JSON) -> None:
        raise TypeError("a reference-interface method has no state to load; it is copied or replayed")

    def __deepcopy__(self, memo: dict[int, Any]) -> ReferenceAdapter:
        """A frozen copy for a test set: the instance copied, the bundle (and its client) shared."""
        memo[id(self._bundle)] = self._bundle
        twin = object.__new__(ReferenceAdapter)
        for key, value in vars(self).items():
            setattr(twin, key, copy.deepcopy(value, memo))
        return twin


def reference_spec(cls: object, name: str, shown: str, options: Mapping[str, Any], where: str) -> tuple[
        MethodSpec, dict[str, JSON]]:
    """The spec of a reference-interface class, with its options checked; `shown` names it in errors."""
    if not isinstance(cls, type) or not all(callable(getattr(cls, hook, None)) for hook in _HOOKS):
        raise ShiftbenchInputError(f"{where}: {shown} is not a class of the reference's Method interface "
                                   "(it needs setup(bundle), context(task, phase, window) and update(results))")
    declared = constructor_options(cls)
    values = check_options(declared, options, f"{where} ({shown})")
    try:
        probe = cls(**values)
    except Exception as exc:  # the user's constructor
        raise ShiftbenchInputError(f"{where}: {shown}(...) failed: {type(exc).__name__}: {exc}") from None
    learns = getattr(probe, "learns", False)
    block_size = getattr(probe, "block_size", REFERENCE_BLOCK_SIZE)
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ShiftbenchInputError(f"{where}: {shown}.block_size must be a whole number of at least 1, "
                                   f"got {block_size!r}")
    uses_model = bool(getattr(probe, "uses_model", False))

    def build(setup: MethodSetup) -> ReferenceAdapter:
        return ReferenceAdapter(cls(**setup.options), setup, uses_model)

    summary = (inspect.getdoc(cls) or f"{cls.__name__} (reference interface)").splitlines()[0]
    spec = MethodSpec(name=name, summary=summary, uses_model=uses_model, build=build, learns=bool(learns),
                      options=declared, block_size=block_size, snapshot="copy")
    return spec, values


def constructor_options(cls: type) -> tuple[MethodOption, ...]:
    """Keyword arguments of the constructor whose type is plain (int, float, str, bool) from their
    annotation or their default; a parameter without a default is a required option."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return ()
    declared = []
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        has_default = parameter.default is not parameter.empty
        kind = _KINDS.get(parameter.annotation) or (_KINDS.get(type(parameter.default)) if has_default else None)
        if kind is None or (has_default and parameter.default is None):
            continue
        low = 1 if parameter.name == BLOCK_SIZE else None
        declared.append(MethodOption(parameter.name, kind, parameter.default if has_default else None, low=low))
    return tuple(declared)


def _is_json(value: object) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)

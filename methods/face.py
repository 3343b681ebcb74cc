"""The method face: the only shiftbench modules a user's method may import in its worker.

A method needs the interface it implements, the records and views it is handed, the model client it
calls, and shiftbench's own helpers for writing one; it must never reach what holds the labels (the
suite's generators, the domains' worlds and graders, the dataset's reader, the scripted model). This
list draws that line. A worker loads these modules before its boundary goes up and nothing else of
shiftbench's: importing any other (`simulators.suite`, `simulators.domains.retail`, `methods.tabular`,
...) fails with one line naming the module, and the boundary keeps shiftbench's source files out of
reach, so the refusal holds even for a method that removes the import check.

What each part gives a method author (docs/methods.md shows them in use):
- `methods.base`: `Method`, `MethodSpec`, `MethodSetup`, `PublicScenario`, `Labelled`, `NonLearning`;
- `methods.options`: `MethodOption` and the option checks;
- `methods.text`, `methods.llm_json`, `methods.bm25`: text helpers, JSON-answering model calls, BM25;
- `methods.blind`, `oracle`, `icl_full`, `lessons`, `rag`, `playbook`, `drift_rules`: shiftbench's own
  learners, to build on (not `methods.tabular`, which reads the domains' own vocabularies);
- `methods.slb`: the reference interface's adapter;
- `simulators.protocol`, `simulators.record`, `simulators.model_api`: `TaskView`, `Message`, `ToolCall`,
  `EpisodeRecord`, `Step`, `ModelClient`, `ModelRequest`, `ModelResponse`, `JSON`;
- `simulators.errors`, `simulators.canonical`, `simulators.pycompat`, `simulators.policy_block`: input
  errors, canonical JSON, the reference's argument forms, reading a document's policy block.
`runner.workers.*` is the worker's own machinery (the wire, the child loop), loaded with the face; it
holds nothing of the run.
"""

from __future__ import annotations

import importlib

__all__ = ["FACE", "TOPS", "in_face", "preload"]

TOPS = ("methods", "simulators", "runner")
"""shiftbench's top packages: a module under one of them is shiftbench's."""

FACE = (
    "methods", "methods.base", "methods.options", "methods.text", "methods.llm_json", "methods.bm25",
    "methods.names", "methods.loading", "methods.source", "methods.entry_points", "methods.spec", "methods.face",
    "methods.blind", "methods.oracle", "methods.icl_full", "methods.lessons", "methods.rag", "methods.playbook",
    "methods.drift_rules", "methods.slb", "methods.slb.adapter", "methods.slb.llm", "methods.slb.record",
    "simulators", "simulators.protocol", "simulators.record", "simulators.model_api", "simulators.errors",
    "simulators.canonical", "simulators.pycompat", "simulators.policy_block",
)
"""Every module of the face, packages included."""

_MACHINERY = "runner.workers"


def in_face(name: str) -> bool:
    """Whether a method may import the module `name` (any module that is not shiftbench's is the
    boundary's business, not the face's)."""
    if name.split(".")[0] not in TOPS:
        return True
    return name in FACE or name == "runner" or name == _MACHINERY or name.startswith(_MACHINERY + ".")


def preload() -> None:
    """Import the whole face (the fork server does, so every worker starts with it loaded)."""
    for name in FACE:
        importlib.import_module(name)

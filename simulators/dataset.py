"""Dataset directories: load and validate, write atomically, fingerprint.

The layout is the public ServeLearnBench export's, so that export runs unchanged:

    data/<scenario>/serving.jsonl        environments/<scenario>/system_prompt.txt
    data/<scenario>/test.jsonl           environments/<scenario>/tools.json
                                         environments/<scenario>/{policy,workflow}.md  (retail, banking)
                                         environments/<scenario>/world.json
                                         environments/<scenario>/windows.json

Every problem is a `DatasetError` naming the file (and line) and what to do about it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import orjson

from simulators.canonical import dumps_line
from simulators.errors import DatasetError
from simulators.protocol import (
    DOMAINS,
    JSON,
    Action,
    Evaluator,
    Scenario,
    ScenarioEnvironment,
    Task,
    Window,
)
from simulators.schema import check_schema_shape

__all__ = ["Dataset", "fingerprint", "load_dataset", "load_scenario", "write_dataset", "scenario_names"]

SPLITS = ("serving", "test")
DOC_NAMES = ("policy", "workflow")
_TASK_FIELDS: dict[str, type | tuple[type, ...]] = {
    "task_id": str,
    "scenario": str,
    "domain": str,
    "tier": str,
    "split": str,
    "window": int,
    "timestamp": int,
    "category": str,
    "instruction": str,
    "evaluator": dict,
}


@dataclass(frozen=True)
class Dataset:
    root: Path
    scenarios: Mapping[str, Scenario]
    fingerprint: str
    file_hashes: Mapping[str, str]


def scenario_names(root: Path) -> list[str]:
    data = root / "data"
    if not data.is_dir():
        raise DatasetError(root, "not a dataset directory: it has no data/ folder. "
                                 "Build one with `shiftbench data build` or point at a ServeLearnBench export.")
    names = sorted(p.name for p in data.iterdir() if p.is_dir())
    if not names:
        raise DatasetError(data, "holds no scenario folders")
    return names


def load_dataset(root: Path | str, only: Iterable[str] | None = None) -> Dataset:
    """Load and validate every scenario (or those in `only`) of a dataset directory."""
    root = Path(root)
    names = scenario_names(root)
    if only is not None:
        wanted = list(only)
        missing = [n for n in wanted if n not in names]
        if missing:
            raise DatasetError(root / "data", f"has no scenario {missing}; it has {names}")
        names = wanted
    scenarios = {name: load_scenario(root, name) for name in names}
    hashes = file_hashes(root)
    return Dataset(root=root, scenarios=scenarios, fingerprint=combined_hash(hashes), file_hashes=hashes)


def load_scenario(root: Path, name: str) -> Scenario:
    domain = _domain_of(root / "data" / name, name)
    environment = _load_environment(root / "environments" / name, domain)
    splits = {split: _load_tasks(root / "data" / name / f"{split}.jsonl", name, split, environment)
              for split in SPLITS}
    serving, test = splits["serving"], splits["test"]
    tier = serving[0].tier if serving else (test[0].tier if test else "")
    return Scenario(name=name, domain=domain, tier=tier, environment=environment,
                    serving=tuple(serving), test=tuple(test))


def _domain_of(path: Path, name: str) -> str:
    domain = name.split("_")[0]
    if domain not in DOMAINS:
        raise DatasetError(path, f"scenario '{name}' names no known domain; "
                                 f"scenario folders start with one of {list(DOMAINS)}")
    return domain


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise DatasetError(path, "missing file; every scenario needs it (see the dataset layout in the README)")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(path, f"cannot be read as UTF-8 text: {exc}") from exc


def _read_json(path: Path) -> JSON:
    text = _read_text(path)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise DatasetError(path, f"is not valid JSON: {exc}") from exc


def _load_environment(folder: Path, domain: str) -> ScenarioEnvironment:
    docs = {}
    for doc in DOC_NAMES:
        path = folder / f"{doc}.md"
        if domain != "pitch" or path.exists():
            docs[doc] = _read_text(path)
    world = _read_json(folder / "world.json")
    if not isinstance(world, dict):
        raise DatasetError(folder / "world.json", "must hold a JSON object (pitch: {})")
    return ScenarioEnvironment(
        system_prompt=_read_text(folder / "system_prompt.txt"),
        tools=_load_tools(folder / "tools.json"),
        docs=docs,
        world=world,
        windows=_load_windows(folder / "windows.json"),
    )


def _load_tools(path: Path) -> tuple[Mapping[str, JSON], ...]:
    tools = _read_json(path)
    if not isinstance(tools, list) or not tools:
        raise DatasetError(path, "must be a non-empty JSON list of tool schemas in OpenAI function format")
    names: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tool #{index + 1}"
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise DatasetError(path, f"{where} must be {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}")
        where = f"tool '{function['name']}'"
        problem = check_schema_shape(function.get("parameters", {"type": "object"}))
        if problem:
            raise DatasetError(path, f"{where}: {problem}")
        if function["name"] in names:
            raise DatasetError(path, f"{where} is declared twice")
        names.add(function["name"])
    if "finish" not in names:
        raise DatasetError(path, "declares no `finish` tool; every scenario needs one")
    return tuple(tools)


def _load_windows(path: Path) -> tuple[Window, ...]:
    rows = _read_json(path)
    if not isinstance(rows, list) or not rows:
        raise DatasetError(path, "must be a non-empty JSON list of {window, first_position, oracle_bulletin}")
    windows = []
    for index, row in enumerate(rows):
        if not (isinstance(row, dict) and isinstance(row.get("window"), int)
                and isinstance(row.get("first_position"), int) and isinstance(row.get("oracle_bulletin"), str)):
            raise DatasetError(path, f"entry #{index + 1} must have integer window and first_position "
                                     "and a string oracle_bulletin")
        windows.append(Window(row["window"], row["first_position"], row["oracle_bulletin"]))
    return tuple(sorted(windows, key=lambda w: w.first_position))


def _load_tasks(path: Path, scenario: str, split: str, environment: ScenarioEnvironment) -> list[Task]:
    if not path.is_file():
        raise DatasetError(path, "missing file; every scenario needs serving.jsonl and test.jsonl")
    tools = environment.tool_names()
    tasks: list[Task] = []
    seen: set[str] = set()
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            task = _parse_task(path, number, raw, scenario, split, tools)
            if task.task_id in seen:
                raise DatasetError(path, f"task_id '{task.task_id}' appears twice", number)
            seen.add(task.task_id)
            tasks.append(task)
    return tasks


def _parse_task(path: Path, line: int, raw: bytes, scenario: str, split: str, tools: frozenset[str]) -> Task:
    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DatasetError(path, f"not valid JSON ({exc}); each line must be one JSON object", line) from exc
    if not isinstance(row, dict):
        raise DatasetError(path, "each line must be one JSON object", line)
    for name, kind in _TASK_FIELDS.items():
        if name not in row:
            raise DatasetError(path, f"missing field '{name}'", line)
        if not isinstance(row[name], kind) or (kind is int and isinstance(row[name], bool)):
            raise DatasetError(path, f"field '{name}' has the wrong type", line)
    if row["scenario"] != scenario:
        raise DatasetError(path, f"scenario is '{row['scenario']}' but the file is under {scenario}/", line)
    if row["split"] != split:
        raise DatasetError(path, f"split is '{row['split']}' in {split}.jsonl", line)
    if row["category"] not in ("hidden", "fully_specified"):
        raise DatasetError(path, "category must be 'hidden' or 'fully_specified'", line)
    evaluator = _parse_evaluator(path, line, row["evaluator"], tools)
    return Task(
        task_id=row["task_id"], scenario=scenario, domain=row["domain"], tier=row["tier"],
        split=cast(Any, split), window=row["window"], timestamp=row["timestamp"],
        category=row["category"], instruction=row["instruction"], evaluator=evaluator,
    )


def _parse_evaluator(path: Path, line: int, raw: dict[str, JSON], tools: frozenset[str]) -> Evaluator:
    actions_raw = raw.get("actions", [])
    if not isinstance(actions_raw, list):
        raise DatasetError(path, "evaluator.actions must be a list", line)
    actions = []
    for action in actions_raw:
        if not (isinstance(action, dict) and isinstance(action.get("name"), str)
                and isinstance(action.get("kwargs", {}), dict)):
            raise DatasetError(path, "each evaluator action must be {name, kwargs}", line)
        if action["name"] not in tools:
            raise DatasetError(path, f"evaluator action names unknown tool '{action['name']}' "
                                     "(not in tools.json)", line)
        actions.append(Action(action["name"], action.get("kwargs", {})))
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        raise DatasetError(path, "evaluator.metadata must be an object", line)
    return Evaluator(slice=str(raw.get("slice", "")), family=str(raw.get("family", "")),
                     actions=tuple(actions), answer=raw.get("answer"), metadata=metadata)


# ---------------------------------------------------------------------------------------------- hashes

def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under data/ and environments/, by path relative to the root."""
    hashes = {}
    for top in ("data", "environments"):
        for path in sorted((root / top).rglob("*")):
            if path.is_file():
                hashes[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def combined_hash(hashes: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(hashes):
        digest.update(f"{name}\0{hashes[name]}\n".encode())
    return digest.hexdigest()


def fingerprint(root: Path | str) -> str:
    return combined_hash(file_hashes(Path(root)))


# ---------------------------------------------------------------------------------------------- writing

def task_row(task: Task) -> dict[str, JSON]:
    return {
        "task_id": task.task_id, "scenario": task.scenario, "domain": task.domain, "tier": task.tier,
        "split": task.split, "window": task.window, "timestamp": task.timestamp,
        "category": task.category, "instruction": task.instruction,
        "evaluator": {
            "slice": task.evaluator.slice, "family": task.evaluator.family,
            "actions": [{"name": a.name, "kwargs": dict(a.kwargs)} for a in task.evaluator.actions],
            "answer": task.evaluator.answer, "metadata": dict(task.evaluator.metadata),
        },
    }


def write_dataset(root: Path | str, scenarios: Iterable[Scenario]) -> str:
    """Write scenarios in the dataset layout and return the fingerprint.

    Files go to a temporary sibling folder that replaces `root` only when complete, so a crash or a
    bad scenario never leaves a half-written dataset behind.
    """
    root = Path(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    try:
        for scenario in scenarios:
            _write_scenario(staging, scenario)
        if root.exists():
            retired = root.with_name(f".{root.name}.old.{os.getpid()}")
            root.rename(retired)
            staging.rename(root)
            shutil.rmtree(retired)
        else:
            staging.rename(root)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return fingerprint(root)


def _write_scenario(root: Path, scenario: Scenario) -> None:
    data = root / "data" / scenario.name
    env_dir = root / "environments" / scenario.name
    data.mkdir(parents=True)
    env_dir.mkdir(parents=True)
    for split, tasks in (("serving", scenario.serving), ("test", scenario.test)):
        (data / f"{split}.jsonl").write_bytes(b"".join(dumps_line(task_row(t)) for t in tasks))
    env = scenario.environment
    (env_dir / "system_prompt.txt").write_text(env.system_prompt, encoding="utf-8")
    for name, text in env.docs.items():
        (env_dir / f"{name}.md").write_text(text, encoding="utf-8")
    pretty = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    (env_dir / "tools.json").write_bytes(orjson.dumps(list(env.tools), option=orjson.OPT_INDENT_2))
    (env_dir / "world.json").write_bytes(orjson.dumps(env.world, option=pretty))
    windows = [{"window": w.window, "first_position": w.first_position, "oracle_bulletin": w.oracle_bulletin}
               for w in env.windows]
    (env_dir / "windows.json").write_bytes(orjson.dumps(windows, option=pretty))

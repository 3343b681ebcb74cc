"""`shiftbench audit metamorphic RUN_ID --transform NAME|FILE [--labels FILE] [--min-kept P]`.

Each recorded episode is a source; its derived case `source~transform` is the same task with the
customer message rewritten (`runner.audits.transforms`). Both run through the engine's episode loop
with the same model and the method's context as it was: the source replay is answered from the run's
paid answers and must reproduce the recording (else the pair is `missing`); the derived case's calls
are new, journaled, priced and budgeted under the audit's id.

Relations, per pair (None where it does not apply: `same_state` needs a world, pitch has none):
- `same_state`: the same final world (canonical hash);
- `same_actions`: the same tool calls with the same arguments, documents aside;
- `same_output`: the same finish arguments.
Pass rates carry Clopper-Pearson 95% intervals. A transform counts (`checked`) only when human
validity labels (`{"case": "<source>~<transform>", "kept": true|false}` per line) give a 95% lower
bound of kept/pairs at least `--min-kept`; until then its results are reported as unchecked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from runner.audits.faults import calls_of, reproduces
from runner.audits.rates import rate_of
from runner.audits.replay import Recorded, Replay, open_replay
from runner.audits.transforms import Transform, derived_task, load_transform
from runner.audits.vocabulary import DEFAULT_MIN_KEPT, RELATIONS
from runner.providers.priority import TEST
from runner.schedule.episode import EpisodeResult, run_episode
from runner.stats.stats import clopper_pearson
from simulators.errors import ShiftbenchInputError
from simulators.protocol import JSON, Task
from simulators.registry import get_domain

__all__ = ["RELATIONS", "Labels", "load_labels", "relations", "run_metamorphic_audit", "transform_checked"]



@dataclass(frozen=True)
class Labels:
    kept: int
    pairs: int

    def lower_bound(self) -> float:
        return clopper_pearson(self.kept, self.pairs)[0] if self.pairs else 0.0


def transform_checked(labels: Labels, min_kept: float) -> bool:
    """A transform counts once it has labels and their lower bound of kept / pairs reaches `min_kept`."""
    return labels.pairs > 0 and labels.lower_bound() >= min_kept


def load_labels(path: Path | None, transform: str) -> Labels:
    """The labels of one transform's pairs (lines for other transforms are skipped)."""
    if path is None:
        return Labels(0, 0)
    kept = pairs = 0
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ShiftbenchInputError(f"--labels {path}: cannot read it ({exc.strerror})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            label = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ShiftbenchInputError(f"--labels {path}:{number}: not JSON ({exc})") from exc
        if not isinstance(label, dict) or not isinstance(label.get("case"), str) or \
                not isinstance(label.get("kept"), bool):
            raise ShiftbenchInputError(f'--labels {path}:{number}: each line is {{"case": "<source>~<transform>", '
                                       '"kept": true|false}')
        if label["case"].endswith(f"~{transform}"):
            pairs += 1
            kept += label["kept"]
    return Labels(kept, pairs)


def _actions(result: EpisodeResult) -> list[tuple[str, str]]:
    return [(name, arguments) for name, arguments in calls_of(result.record) if name not in ("read_docs", "finish")]


def relations(source: EpisodeResult, derived: EpisodeResult) -> dict[str, bool | None]:
    same_state = None
    if source.audit is not None and derived.audit is not None:
        same_state = source.audit.final_hash == derived.audit.final_hash
    return {"same_state": same_state, "same_actions": _actions(source) == _actions(derived),
            "same_output": source.record.finish_arguments == derived.record.finish_arguments}


async def _pair(replay: Replay, episode: Recorded, transform: Transform) -> tuple[str, dict[str, JSON]]:
    case = f"{episode.unit_id}~{transform.name}"
    details: dict[str, JSON] = {"case": case, "source": episode.unit_id, "task_id": episode.task.task_id,
                                "scenario": episode.stream.scenario.name}
    domain = get_domain(episode.stream.scenario.domain)
    context = await replay.context(episode)

    async def run(task: Task, unit_id: str) -> EpisodeResult:
        model = replay.engine.clients.client(episode.stream.model, unit_id, episode.stream.stream_id, "agent", TEST)
        return await run_episode(task, episode.stream.scenario.environment, domain, model, context)

    source = await run(episode.task, episode.unit_id)
    if not reproduces(source, episode.record):
        details["why"] = "the source replay did not reproduce the recording"
        return "missing", details
    derived = await run(derived_task(episode.task, transform), case)
    found = relations(source, derived)
    details.update(found, source_reward=source.grade.reward, derived_reward=derived.grade.reward)
    broken = [name for name, held in found.items() if held is False]
    details["broken"] = broken
    return ("fail" if broken else "pass"), details


async def run_metamorphic_audit(journal: Path, run_id: str, transform_name: str, labels_path: Path | None = None,
                                min_kept: float = DEFAULT_MIN_KEPT, budget: float | None = None) -> dict[str, Any]:
    transform = load_transform(transform_name)
    labels = load_labels(labels_path, transform.name)
    spec = {"transform": transform.name, "source": transform_name}
    async with open_replay(journal, run_id, "metamorphic", spec, budget) as replay:
        status = await replay.run_cases(lambda e: f"{e.unit_id}~{transform.name}",
                                        lambda e: _pair(replay, e, transform))
        done = await replay.journal.read.audit_cases(replay.audit_id)
    cases = [{**orjson.loads(details), "verdict": verdict} for _, (verdict, details) in sorted(done.items())]
    lower = labels.lower_bound()
    return {"audit_id": replay.audit_id, "status": status, "transform": transform.name,
            "checked": transform_checked(labels, min_kept),
            "labels": {"kept": labels.kept, "pairs": labels.pairs, "lower_bound": lower, "min_kept": min_kept},
            "relations": _relation_rates(cases), "cases": cases}


def _relation_rates(cases: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    rates = {}
    for name in RELATIONS:
        held = [case[name] for case in cases if case.get(name) is not None]
        rate = rate_of(sum(bool(h) for h in held), len(held))
        rates[name] = {"pass": rate.passed, "total": rate.total, "ci": list(rate.ci),
                       "failing": [case["case"] for case in cases if case.get(name) is False]}
    return rates



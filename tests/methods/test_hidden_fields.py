"""No hidden field can reach a method: what a method is handed carries no evaluator, category, window
or split, and only a spec that says `sees_bulletin` is given bulletins. Checked on the types, and on
a real engine run of every registered method with spies around what it is handed."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from methods.base import Method, MethodSetup, MethodSpec
from methods.registry import METHOD_REGISTRY, get_method_spec
from runner.config.plan import Stream
from runner.config.settings import SweepConfig
from runner.display.progress import RunProgress
from runner.journal import open_journal
from runner.schedule.engine import Engine, stream_progress
from runner.schedule.sweep import create_run
from simulators.dataset import Dataset
from simulators.domain import Domain
from simulators.model_api import ModelRequest
from simulators.protocol import JSON, AssistantTurn, TaskView
from simulators.record import EpisodeRecord
from tests.fakes import ScriptModel, ToyDomain, offline_clients, toy_decider, toy_scenario

HIDDEN = {"evaluator", "category", "window", "split"}
RUN = "r-hidden"


def field_names(cls: type, seen: set[type] | None = None) -> set[str]:
    """Field names of a dataclass and of every dataclass its fields hold, however nested."""
    seen = seen if seen is not None else set()
    if cls in seen or not dataclasses.is_dataclass(cls):
        return set()
    seen.add(cls)
    names: set[str] = set()
    for name, hint in typing.get_type_hints(cls).items():
        names.add(name)
        for inner in _types_in(hint):
            names |= field_names(inner, seen)
    return names


def _types_in(hint: object) -> list[type]:
    found = [hint] if isinstance(hint, type) else []
    for arg in typing.get_args(hint):
        found += _types_in(arg)
    return found


@pytest.mark.parametrize("cls", [TaskView, EpisodeRecord])
def test_what_methods_are_handed_has_no_hidden_field(cls: type) -> None:
    assert field_names(cls) & HIDDEN == set()
    assert "instruction" in field_names(cls)  # the walk does reach the fields


@dataclass
class Spy:
    """Wraps a method and keeps everything it is handed."""

    inner: Method
    handed: list[object] = field(default_factory=list)

    def context(self, task: TaskView) -> str:
        self.handed.append(task)
        return self.inner.context(task)

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        self.handed.extend(records)
        await self.inner.learn(records)

    def state(self) -> JSON:
        return self.inner.state()

    def load(self, state: JSON) -> None:
        self.inner.load(state)


@dataclass
class SpyRegistry:
    setups: list[tuple[MethodSpec, MethodSetup]] = field(default_factory=list)
    spies: list[Spy] = field(default_factory=list)

    def __call__(self, name: str) -> MethodSpec:
        spec = get_method_spec(name)

        def build(setup: MethodSetup) -> Spy:
            self.setups.append((spec, setup))
            self.spies.append(Spy(spec.build(setup)))
            return self.spies[-1]

        return dataclasses.replace(spec, build=build)


async def agent_or_method(request: ModelRequest) -> AssistantTurn:
    if request.purpose == "method":
        return AssistantTurn(text=orjson.dumps({
            "lessons": [{"title": "Decide yes", "when": "always", "do": "decide yes"}],
            "tags": [], "ops": [{"op": "add", "text": "Decide yes"}],
            "new_rules": [{"rule": "Decide yes", "alternative": "Decide no"}]}).decode())
    return await toy_decider(lambda r: "yes")(request)


@pytest.mark.parametrize("name", sorted(METHOD_REGISTRY))
async def test_a_run_hands_methods_views_records_and_bulletins_only_by_design(name: str, tmp_path: Path) -> None:
    scenario = toy_scenario(windows=2, serving_per_window=3, test_per_window=1)
    stream = Stream("script", name, scenario, scenario.serving, scenario.test)
    model, registry = ScriptModel(agent_or_method), SpyRegistry()
    async with open_journal(tmp_path / "j.sqlite") as journal:
        dataset = Dataset(root=Path("."), scenarios={scenario.name: scenario}, fingerprint="f", file_hashes={})
        await create_run(journal, RUN, SweepConfig(models=("script",), methods=(name,),
                                                    scenarios=(scenario.name,)), dataset, [stream])
        progress = RunProgress(run_id=RUN, journal_path=str(journal.path))
        progress.streams[stream.stream_id] = stream_progress(stream)
        engine = Engine(run_id=RUN, journal=journal, progress=progress,
                        clients=offline_clients(journal, progress, model, concurrency=4), block_size=2,
                        max_episode_attempts=1,
                        domains=lambda _: typing.cast(Domain, ToyDomain()), method_specs=registry)
        await engine.run([stream])
    assert registry.setups
    for spec, setup in registry.setups:
        assert (setup.bulletins is not None) == spec.sees_bulletin
        assert (setup.client is not None) == spec.uses_model
    handed = [item for spy in registry.spies for item in spy.handed]
    assert handed and {type(item) for item in handed} <= {TaskView, EpisodeRecord}
    method_requests = [r for r in model.requests if r.purpose == "method"]
    assert bool(method_requests) == get_method_spec(name).uses_model
    bulletins = [w.oracle_bulletin for w in scenario.environment.windows]
    for request in method_requests:
        text = request.full_system + "".join(m.content for m in request.messages)
        assert request.tools == () and not any(b in text for b in bulletins)

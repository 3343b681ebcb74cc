"""A class of the reference's interface, run by the real engine through the adapter: what it is handed
(the public bundle, labelled contexts, blocks of its own size within a window, reference records), its
test sets on copies made at the window's end, no serving stream when it does not learn, and a resume
that replays its updates with its model calls answered from the journal."""

from __future__ import annotations

from pathlib import Path

from methods.slb.record import EpisodeResult
from methods.spec import resolve_method
from runner.config.plan import Stream
from runner.display.progress import RunProgress
from runner.journal import Journal, open_journal
from runner.models.registry import ModelEntry
from runner.models.stack import ClientStack
from runner.schedule.engine import Engine, stream_progress
from runner.schedule.sweep import create_run
from simulators.dataset import Dataset
from simulators.model_api import ModelRequest
from simulators.protocol import AssistantTurn, Scenario, TaskView
from tests.fakes import ScriptModel, ToyDomain, toy_decider, toy_scenario
from tests.methods.reference_spies import Asking, Counting, Watching

RUN = "r-adapter"


def decide_best(request: ModelRequest) -> str:
    return "no" if "best=no" in request.full_system else "yes"


async def agent_or_method(request: ModelRequest) -> AssistantTurn:
    if request.purpose == "method":
        return AssistantTurn(text="no")
    return await toy_decider(decide_best)(request)


def engine_for(journal: Journal, model: ScriptModel, spec_text: str, stream: Stream) -> Engine:
    resolved = resolve_method(spec_text, name="ref")
    progress = RunProgress(run_id=RUN, journal_path=str(journal.path))
    progress.streams[stream.stream_id] = stream_progress(stream)
    # Not offline: the method's calls pass the journal and its response cache, as a paid model's do.
    clients = ClientStack(run_id=RUN, journal=journal, progress=progress,
                          models={"script": ModelEntry("script", model, offline=False)}, prices={"script": None},
                          budget=None, concurrency=8, model_concurrency=8)
    return Engine(run_id=RUN, journal=journal, progress=progress, clients=clients, block_size=5,
                  max_episode_attempts=1, domains=lambda name: ToyDomain(),  # type: ignore[arg-type, return-value]
                  method_specs=lambda name: resolved.spec)


async def run_stream(path: Path, scenario: Scenario, spec_text: str, model: ScriptModel,
                     stop_after_calls: int = 0) -> Stream:
    resolved = resolve_method(spec_text, name="ref")
    stream = Stream("script", "ref", scenario, scenario.serving if resolved.spec.learns else (), scenario.test)
    async with open_journal(path) as journal:
        if not await journal.read.run(RUN):
            dataset = Dataset(root=Path("."), scenarios={scenario.name: scenario}, fingerprint="f", file_hashes={})
            await create_run(journal, RUN, _config(), dataset, [stream], methods={"ref": resolved})
        engine = engine_for(journal, model, spec_text, stream)
        if stop_after_calls:
            inner = model.respond_with

            async def stopping(request: ModelRequest) -> AssistantTurn:
                if len(model.requests) >= stop_after_calls:
                    engine.stop.request("test")
                return await inner(request)

            model.respond_with = stopping
        await engine.run([stream])
    return stream


def _config():  # type: ignore[no-untyped-def]
    from runner.config.settings import SweepConfig
    return SweepConfig(models=("script",), methods=("blind",), scenarios=("toy_l1",))


def reset(*classes: type[Counting]) -> None:
    for cls in classes:
        cls.made.clear()
        cls.asked.clear()


def live_instance(cls: type[Counting]) -> Counting:
    """The instance that served (the last one built that got updates)."""
    return [made for made in cls.made if made.updates][-1]


async def test_the_adapter_hands_the_reference_interface_exactly_what_the_protocol_allows(tmp_path: Path) -> None:
    reset(Counting)
    scenario = toy_scenario(windows=2, serving_per_window=5, test_per_window=2)
    await run_stream(tmp_path / "j.sqlite", scenario, "slb:tests.methods.reference_spies:Counting",
                     ScriptModel(agent_or_method))
    live = live_instance(Counting)
    bundle = live.bundles[0]
    assert set(bundle) == {"meta", "policy_md", "workflow_md", "tools"}
    assert bundle["meta"] == {"scenario": "toy_l1", "domain": "toy", "tier": "L1",
                              "system_prompt": "You decide cases."}
    assert bundle["policy_md"] == "# Policy\nDecide yes." and "window" not in repr(bundle).replace("windows", "")
    assert [tool.name() for tool in bundle["tools"]] == ["read_docs", "decide"]
    assert not any(hasattr(tool, "invoke") for tool in bundle["tools"])
    assert [len(block) for block in live.updates] == [2, 2, 1, 2, 2, 1]  # block_size 2, never across a window
    assert all(isinstance(r, EpisodeResult) and r.record.startswith("INSTRUCTION: Current timestamp: ")
               for block in live.updates for r in block)
    tasks = {t.task_id: t for t in scenario.serving + scenario.test}
    for _, task, phase, window, _ in Counting.asked:
        assert isinstance(task, TaskView) and (phase, window) == (tasks[task.task_id].split, tasks[task.task_id].window)
    # Each window's test set ran on a copy made at its window's end: it had seen that window's serving only.
    tested = [(who, window, seen) for who, _, phase, window, seen in Counting.asked if phase == "test"]
    assert sorted((window, seen) for _, window, seen in tested) == [(0, 5), (0, 5), (1, 10), (1, 10)]
    assert id(live) not in {who for who, _, _ in tested}


async def test_a_class_that_does_not_learn_has_its_serving_stream_skipped(tmp_path: Path) -> None:
    reset(Watching)
    scenario = toy_scenario(windows=2, serving_per_window=3, test_per_window=1)
    model = ScriptModel(agent_or_method)
    stream = await run_stream(tmp_path / "j.sqlite", scenario, "slb:tests.methods.reference_spies:Watching", model)
    assert stream.serving == ()
    assert all(not made.updates for made in Watching.made)
    assert len([r for r in model.requests if r.purpose == "agent"]) == 2 * 2  # two turns per test task


async def test_a_resume_replays_updates_and_answers_their_model_calls_from_the_journal(tmp_path: Path) -> None:
    scenario = toy_scenario(windows=2, serving_per_window=6, test_per_window=2)
    spec = "slb:tests.methods.reference_spies:Asking"
    reset(Asking)
    uninterrupted = ScriptModel(agent_or_method)
    await run_stream(tmp_path / "ref.sqlite", scenario, spec, uninterrupted)
    reference = live_instance(Asking)
    reset(Asking)
    first, second = ScriptModel(agent_or_method), ScriptModel(agent_or_method)
    await run_stream(tmp_path / "j.sqlite", scenario, spec, first, stop_after_calls=9)
    await run_stream(tmp_path / "j.sqlite", scenario, spec, second)
    resumed = live_instance(Asking)
    assert len(resumed.updates) == len(reference.updates)  # every block, the replayed ones included
    assert (resumed.seen, resumed.best) == (reference.seen, reference.best)
    agent_calls = [len([r for r in m.requests if r.purpose == "agent"]) for m in (first, second, uninterrupted)]
    assert 0 < agent_calls[0] < agent_calls[2] and agent_calls[0] + agent_calls[1] == agent_calls[2]
    asked = [r for m in (first, second) for r in m.requests if r.purpose == "method"]
    assert len(asked) == len([r for r in uninterrupted.requests if r.purpose == "method"]) == 6

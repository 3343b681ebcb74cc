"""The conformance checks of `shiftbench methods check`, each over a played stream (`play`).

Each check replays the stream's recorded blocks on fresh instances and stops at its first evidence:
- state: `state()` is JSON and the same when asked twice (a method with no JSON state, the reference
  adapter's: a deep copy can be taken at every window end);
- restore: an instance given `load(state())` (or the deep copy) after a block gives every later
  context exactly as the live one does, through every later block;
- labels: a context does not change with the phase or window (only the adapter is asked with them);
- tests: asking the contexts of a window's test tasks changes neither the state nor a later context;
- learn: two instances learning the same records reach the same state;
- calls: the method's model calls and tokens per block and per serving episode, the agent's per episode;
- context: the largest context, and the largest request it makes, against the model's context length.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Literal

import orjson

from runner.method_check.play import Played, context, copies, freeze
from runner.providers.endpoint import BYTES_PER_TOKEN
from runner.workers.failure import MethodFailure
from runner.workers.handle import MethodHandle
from simulators.protocol import Task

__all__ = ["CHECKS", "Check", "CheckResult", "context_check", "copies", "freeze", "state_bytes"]

PROBE_LABELS: tuple[tuple[Literal["serving", "test"], int], ...] = (("serving", 0), ("test", 0), ("serving", 7),
                                                                    ("test", 99))
"""Labels an adapter method's context is asked under besides the task's own."""


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    evidence: str


Check = Callable[[Played], Awaitable[CheckResult]]


async def check_state(played: Played) -> CheckResult:
    name = "state is JSON"
    method = await played.fresh()
    for number, block in enumerate([None, *played.blocks]):
        if block is not None:
            await method.learn(block.records)
        try:
            if copies(played):
                await (await method.copy()).close()
                continue
            first, second = await state_bytes(method), await state_bytes(method)
        except MethodFailure as failure:
            what = "no deep copy" if copies(played) else "state()"
            return CheckResult(name, False, f"{what} after block {number}: {failure.error.removeprefix('state() ')}")
        if first != second:
            return CheckResult(name, False, f"state() after block {number} differs when asked twice: "
                                            f"{_difference(first.decode(), second.decode())}")
    what = "deep copies (no JSON state: the reference adapter)" if copies(played) else "JSON, the same when asked twice"
    return CheckResult(name, True, f"{what}, after each of {len(played.blocks)} blocks")


async def check_restore(played: Played) -> CheckResult:
    name = "load(state()) restores"
    if not played.blocks:
        return CheckResult(name, True, "no serving stream (learns = False): nothing to restore")
    live = await played.fresh()
    twins: list[tuple[int, MethodHandle]] = []
    compared = 0
    for number, block in enumerate(played.blocks, start=1):
        asked = _asked_after(played, number - 1)
        wanted = await live.contexts(asked)
        for position, twin in twins:
            for task, want, got in zip(asked, wanted, await twin.contexts(asked), strict=True):
                compared += 1
                if want != got:
                    return CheckResult(name, False, f"restored after position {position}: the context of "
                                                    f"{task.task_id} differs: {_difference(want, got)}")
        await live.learn(block.records)
        for _, twin in twins:
            await twin.learn(block.records)
        if block.window_end or number == 1:
            twins.append((block.tasks[-1].timestamp, await freeze(played, live)))
    return CheckResult(name, True, f"{len(twins)} restore points, {compared} later contexts identical")


async def check_labels(played: Played) -> CheckResult:
    name = "context ignores labels"
    method = await played.fresh()
    asked = 0
    for number in range(len(played.blocks) + 1):
        for task in _asked_after(played, number):
            own = await context(method, task)
            asked += 1
            if own != await context(method, task):
                return CheckResult(name, False, f"the context of {task.task_id} differs when asked twice")
            if method.labelled:
                for phase, window in PROBE_LABELS:
                    other = await context(method, replace(task, split=phase, window=window))
                    if other != own:
                        return CheckResult(name, False, f"the context of {task.task_id} changes with the labels: "
                                                        f"({task.split}, window {task.window}) vs ({phase}, window "
                                                        f"{window}): {_difference(own, other)}")
        if number < len(played.blocks):
            await method.learn(played.blocks[number].records)
    how = "phase and window varied" if method.labelled else "a TaskView only, asked twice"
    return CheckResult(name, True, f"{asked} contexts, {how}")


async def check_tests(played: Played) -> CheckResult:
    name = "test tasks do not teach"
    method = await played.fresh()
    windows = sorted({t.window for t in played.tests})
    ends = {block.tasks[-1].window: i + 1 for i, block in enumerate(played.blocks) if block.window_end}
    learned = 0
    for window in windows:
        while learned < ends.get(window, learned):
            await method.learn(played.blocks[learned].records)
            learned += 1
        probes = _asked_after(played, learned)
        before = await _fingerprint(played, method, probes)
        for task in played.tests_of(window):
            await context(method, task)
            after = await _fingerprint(played, method, probes)
            if after != before:
                return CheckResult(name, False, f"asking the context of test task {task.task_id} changed the "
                                                f"method: {_difference(before, after)}")
    return CheckResult(name, True, f"{len(played.tests)} test contexts asked, state unchanged")


async def check_learn(played: Played) -> CheckResult:
    name = "learn is deterministic"
    first, second = await played.fresh(), await played.fresh()
    for number, block in enumerate(played.blocks, start=1):
        await first.learn(block.records)
        await second.learn(block.records)
        probes = _asked_after(played, number)
        one, two = await _fingerprint(played, first, probes), await _fingerprint(played, second, probes)
        if one != two:
            return CheckResult(name, False, f"after block {number} (positions {block.tasks[0].timestamp}-"
                                            f"{block.tasks[-1].timestamp}) two instances given the same records "
                                            f"differ: {_difference(one, two)}")
    return CheckResult(name, True, f"two instances, {len(played.blocks)} blocks, the same state after each")


async def check_calls(played: Played) -> CheckResult:
    blocks = played.blocks
    episodes = sum(len(b.tasks) for b in blocks)
    calls, tokens = sum(b.method_calls for b in blocks), sum(b.method_tokens for b in blocks)
    return CheckResult("model calls", True,
                       f"method: {per(calls, len(blocks))} calls / {per(tokens, len(blocks))} tokens per block "
                       f"(block size {played.block_size}), {per(calls, episodes)} calls / {per(tokens, episodes)} "
                       f"tokens per serving episode; agent: {per(played.agent_calls, episodes)} calls / "
                       f"{per(played.agent_tokens, episodes)} tokens per serving episode ({episodes} episodes)")


def context_check(context_tokens: int) -> Check:
    async def check_context(played: Played) -> CheckResult:
        name = "largest context"
        if not played.contexts:
            return CheckResult(name, True, "no task asked")
        task, context = max(played.contexts, key=lambda pair: len(pair[1].encode()))
        environment = played.scenario.environment
        fixed = len(environment.system_prompt.encode()) + len(orjson.dumps(environment.tools))
        own = _tokens(len(context.encode()))
        request = _tokens(fixed + len(context.encode()) + len(task.instruction.encode()))
        evidence = (f"{own:,} tokens (est.) for {task.task_id}; its first request {request:,} of the model's "
                    f"{context_tokens:,}")
        return CheckResult(name, request <= context_tokens, evidence)

    return check_context


CHECKS: tuple[Check, ...] = (check_state, check_restore, check_labels, check_tests,
                                                      check_learn, check_calls)


# ------------------------------------------------------------------------------------------- helpers

def _asked_after(played: Played, blocks_learned: int) -> list[Task]:
    """The tasks a run asks contexts for after `blocks_learned` blocks: the next block's, and the test
    tasks of the window that block ends (or of every window when the stream has no serving)."""
    if blocks_learned < len(played.blocks):
        following = list(played.blocks[blocks_learned].tasks)
    else:
        following = []
    if blocks_learned and played.blocks[blocks_learned - 1].window_end:
        following += played.tests_of(played.blocks[blocks_learned - 1].tasks[-1].window)
    if not played.blocks:
        following += list(played.tests)
    return following


async def _fingerprint(played: Played, method: MethodHandle, probes: list[Task]) -> str:
    """What shows a method's state: its JSON state, or (no JSON state) its contexts on `probes`."""
    if copies(played):
        texts = await method.contexts(probes)
        return "\n".join(f"{t.task_id}: {text}" for t, text in zip(probes, texts, strict=True))
    return (await state_bytes(method)).decode()


async def state_bytes(method: MethodHandle) -> bytes:
    return orjson.dumps(await method.state(), option=orjson.OPT_SORT_KEYS)


def per(total: int, count: int) -> str:
    return f"{total / count:.2f}" if count else "0"


def _tokens(size: int) -> int:
    return -(-size // BYTES_PER_TOKEN)


def _difference(one: str, two: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b), min(len(one), len(two)))
    return f"first difference at character {at}: {_excerpt(one, at)!r} vs {_excerpt(two, at)!r}"


def _excerpt(text: str, at: int) -> str:
    return text[max(0, at - 20): at + 40]

"""Each size a guest may take has a limit, and a guest past one fails that call with a line naming the
limit and the flag that raises it: memory (the worker's address space: a MemoryError in the method),
output (the fork server stops the worker), state and context (refused before they are journaled).
Within each limit the same method goes through, so each refusal is the limit's."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from runner.workers.failure import MethodFailure
from runner.workers.handle import MethodLimits, WorkerPlan, open_worker_method
from simulators.record import EpisodeRecord
from tests.runner.workers import hog_method
from tests.runner.workers.test_guest_channels import PUBLIC, TASK

HOG_FILE = Path(hog_method.__file__).resolve()
RECORD = EpisodeRecord(TASK.view(), 1, (), 1.0, None, "finish")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker limits are Linux's")


async def hog(what: str, size_mb: int, limits: MethodLimits) -> tuple[str, str]:
    """What the hog's context, learn and state gave: ("ok", "") or ("failed", the failure's line)."""
    plan = WorkerPlan(f"{HOG_FILE}:HOG", {"what": what, "size_mb": size_mb}, "hog", reads=(str(HOG_FILE),))
    handle = await open_worker_method(plan, "retail_l1", "retail", PUBLIC, None, limits)
    try:
        await handle.contexts([TASK])
        await handle.learn([RECORD])
        await handle.state()
    except MethodFailure as failure:
        return "failed", str(failure)
    finally:
        await handle.close()
    return "ok", ""


@pytest.mark.parametrize(("what", "size_mb", "limits", "said"), [
    ("memory", 800, MethodLimits(memory_mb=600), "MemoryError"),
    ("output", 3, MethodLimits(output_mb=1), "its output passed the limit of 1 MB"),
    ("state", 3, MethodLimits(state_mb=1), "its state is 3.0 MB, past the limit of 1 MB"),
    ("context", 3, MethodLimits(context_mb=1), "its context is 3.0 MB, past the limit of 1 MB"),
])
def test_a_guest_past_a_limit_fails_naming_it_and_its_flag(what: str, size_mb: int, limits: MethodLimits,
                                                          said: str) -> None:
    flag = {"memory": "--method-memory", "output": "--method-output-size", "state": "--method-state-size",
            "context": "--method-context-size"}[what]
    outcome, line = anyio.run(hog, what, size_mb, limits)
    assert outcome == "failed" and said in line and f"{flag} raises it" in line, line
    roomy = MethodLimits(memory_mb=4096, output_mb=64, state_mb=64, context_mb=64)
    assert anyio.run(hog, what, size_mb, roomy) == ("ok", "")


def test_an_output_flood_stops_at_its_limit_on_disk(tmp_path: Path) -> None:
    async def flood() -> tuple[str, int]:
        plan = WorkerPlan(f"{HOG_FILE}:HOG", {"what": "output", "size_mb": 20}, "hog", reads=(str(HOG_FILE),))
        handle = await open_worker_method(plan, "retail_l1", "retail", PUBLIC, None, MethodLimits(output_mb=1))
        output = handle.worker.output  # type: ignore[attr-defined]
        try:
            await handle.learn([RECORD])
        except MethodFailure as failure:
            return str(failure), Path(output).stat().st_size  # noqa: ASYNC240 - one stat, after the failure
        finally:
            await handle.close()
        return "", 0

    line, size = anyio.run(flood)
    assert "its output passed the limit of 1 MB" in line
    assert 1_000_000 <= size < 1_001_000  # the limit's bytes and one line saying so, not 20 MB

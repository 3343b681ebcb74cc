"""What a cap buys (issue 38): a priced sweep on the mock provider, uncapped and then capped at shares of
its own cost, live and with `--batch tests`.

The mock answers as the offline scripted agent would (`bench.sweep_cost.scripted_responder`), billed as
the provider's prompt cache would, priced at `openai:gpt-5-mini`'s published live and batch prices, 32
calls in flight. For each mode the uncapped run is measured first; its journal gives the sweep's cost
and, for every cap, the perfect-information stop: the most whole episodes, taken in the order the
uncapped run started them (the run's order: a stop that knew every episode's cost would stop starting
episodes at the last one whose cost fits), whose own cost plus the run's spend outside episodes (method
and probe calls) before it fits the cap. The same count in the order the uncapped run *finished* them is
reported beside it: that order puts the short, cheap episodes first (an episode started early but long
finishes late), so it asks for more episodes than any stop in the run's order can finish. Each capped
run is then compared with them:

- spent / cap: what the capped run's journal holds as spent, over the cap (goal: at least 90%);
- finished / perfect: its whole episodes over the perfect-information stop's (goal: at least 90%), and
  over the finish-order count;
- committed money (spent, as journaled) never over the cap.

`--kills N` measures instead what the provider billed under a cap across N kills: `shiftbench run` as a
process of its own (live, no prompt cache) is killed with SIGKILL at a random moment and resumed, N
times, then resumed to its end; the mock tallies every answer it produced, priced, so the calls a killed
process had in flight count although its journal never recorded them.

    python -m bench.budget_caps [--caps 10,25,50,75,90] [--modes live,batch] [--pilot N]
                                [--methods blind,oracle,tabular] [--scenarios ...] [--json FILE] [--keep DIR]
    python -m bench.budget_caps --kills 20 [--caps 50] [--pilot 4]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio
import orjson

from bench.batch_sweep import DIALECTS, _table
from bench.mock_batch_state import BatchSettings
from bench.mock_cache import PrefixCache
from bench.mock_provider import Recorded, Reply, Response, serve_mock
from bench.sweep_cost import scripted_responder
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.pricing import default_prices
from runner.journal import JournalError, read_only
from runner.journal.analysis_queries import EpisodeFigures
from runner.journal.rows import ModelCallRow
from runner.schedule.sweep import start_sweep
from simulators.protocol import SCENARIOS
from simulators.suite import build_suite

__all__ = ["CapRow", "main", "perfect_count", "perfect_stop"]

_KEY = "sk-loopback-budget-caps-0000"


@dataclass(frozen=True)
class CapRow:
    mode: str
    share: float
    """The cap as a share of the uncapped run's cost."""
    cap_usd: float
    spent_usd: float
    finished: int
    perfect: int
    """The perfect-information stop in the uncapped run's start order."""
    perfect_by_finish: int
    """The same in the order the uncapped run finished its episodes (cheap ones first)."""
    status: str
    wall_s: float

    @property
    def spent_share(self) -> float:
        return self.spent_usd / self.cap_usd

    @property
    def finished_share(self) -> float:
        return self.finished / self.perfect if self.perfect else 1.0

    @property
    def finish_order_share(self) -> float:
        return self.finished / self.perfect_by_finish if self.perfect_by_finish else 1.0


async def perfect_stop(journal: Path, run_id: str, cap: float, order: str = "started") -> int:
    """`perfect_count` of the journal's run."""
    async with read_only(journal) as reader:
        return perfect_count(await reader.episode_figures(run_id), await reader.model_calls(run_id), cap, order)


def perfect_count(figures: Sequence[EpisodeFigures], calls: Sequence[ModelCallRow], cap: float,
                  order: str = "started") -> int:
    """The most whole episodes that `cap` pays for, taken in the order they started (`order="started"`)
    or finished: each episode's own calls, plus every call outside an episode (methods, probes) made
    before it started (or finished)."""
    # An episode's latency is its wall time from its start to its end.
    moment = {e.unit_id: e.finished_at - (e.latency_s if order == "started" else 0.0) for e in figures}
    by_unit: dict[str, float] = {}
    for call in calls:
        by_unit[call.unit_id] = by_unit.get(call.unit_id, 0.0) + call.cost_usd
    outside = sorted((c.created_at, c.cost_usd) for c in calls if c.purpose in ("method", "probe"))
    spent, count, later = 0.0, 0, 0
    for unit in sorted(moment, key=moment.__getitem__):
        while later < len(outside) and outside[later][0] <= moment[unit]:
            spent += outside[later][1]
            later += 1
        cost = by_unit.get(unit, 0.0)
        if spent + cost > cap:
            break
        spent += cost
        count += 1
    return count


async def _journaled(journal: Path, run_id: str) -> tuple[float, int]:
    """What the run spent (every journaled call) and its finished episodes."""
    async with read_only(journal) as reader:
        return (await reader.spend(run_id)).total, len(await reader.episode_figures(run_id))


async def _sweep(suite: Path, journal: Path, mode: str, args: argparse.Namespace,
                 budget: float | None) -> tuple[str, str, float]:
    name, kind, priced_as = DIALECTS["openai"]
    async with serve_mock(scripted_responder(), cache=PrefixCache()) as mock:
        mock.batches.settings = BatchSettings(latency_s=args.latency)
        mock.keep_requests = False  # a full sweep's every request body would otherwise stay in memory
        mock.batches.keep = False
        config = SweepConfig(
            models=(name,), methods=tuple(args.methods.split(",")), scenarios=tuple(args.scenarios.split(",")),
            dataset=str(suite), pilot=args.pilot, concurrency=32, budget=budget,
            endpoints={name: {"kind": kind, "model": "openai-mock", "base_url": f"{mock.base_url}/v1"}},
            prices={name: _table(default_prices()[priced_as])}, batch="tests" if mode == "batch" else "off",
            batch_settings={"wait_s": 1.0, "poll_s": 0.5, "poll_max_s": 2.0})
        started = time.perf_counter()
        outcome = await start_sweep(config, journal, "none", lambda _: None)
        return outcome.run_id, outcome.status, time.perf_counter() - started


def measure(suite: Path, folder: Path, mode: str, shares: Sequence[float], args: argparse.Namespace
            ) -> tuple[float, list[CapRow]]:
    free = folder / f"{mode}-free.sqlite"
    free_run, status, _ = anyio.run(_sweep, suite, free, mode, args, None)
    if status != "completed":
        raise SystemExit(f"budget_caps: the uncapped {mode} run ended {status}")
    full, _ = anyio.run(_journaled, free, free_run)
    rows = []
    for share in shares:
        cap = full * share
        journal = folder / f"{mode}-{share:.2f}.sqlite"
        run_id, status, wall = anyio.run(_sweep, suite, journal, mode, args, cap)
        spent, finished = anyio.run(_journaled, journal, run_id)
        perfect = anyio.run(perfect_stop, free, free_run, cap, "started")
        by_finish = anyio.run(perfect_stop, free, free_run, cap, "finished")
        rows.append(CapRow(mode, share, cap, spent, finished, perfect, by_finish, status, wall))
        print(render([rows[-1]], full), flush=True)
    return full, rows


async def killed_and_resumed(suite: Path, folder: Path, args: argparse.Namespace, share: float) -> dict[str, float]:
    """The provider's bill of a capped sweep killed `args.kills` times (see the module's note)."""
    _, kind, priced_as = DIALECTS["openai"]
    price = default_prices()[priced_as]
    billed: list[float] = []
    answer = scripted_responder()

    def respond(request: Recorded) -> Response:
        reply = answer(request)
        if not isinstance(reply, Reply):
            return reply
        billed.append((reply.usage.input_tokens * price.input + reply.usage.output_tokens * price.output) / 1e6)
        return dataclasses.replace(reply, delay_s=REPLY_S)  # a provider's time to answer: calls are in flight

    async with serve_mock(respond) as mock:
        free = folder / "kills-free.sqlite"
        await anyio.run_process(_cli(folder, mock.base_url, kind, price, args, None, free), check=True)
        cap = sum(billed) * share
        billed.clear()
        journal, rng = folder / "kills.sqlite", random.Random(args.seed)
        command = _cli(folder, mock.base_url, kind, price, args, cap, journal)
        for _ in range(args.kills):
            async with await anyio.open_process(command) as process:
                await anyio.sleep(rng.uniform(0.5, 6.0))
                if process.returncode is None:
                    process.send_signal(signal.SIGKILL)
            run_id = await _the_run(journal)
            if run_id:  # else killed before its run was journaled: it starts again
                command = [*SHIFTBENCH, "resume", run_id, "--journal", str(journal), "--display", "none"]
        await anyio.run_process(command, check=False)
        run_id = await _the_run(journal)
        async with read_only(journal) as reader:
            journaled, lost = (await reader.spend(run_id)).total, await reader.lost_usd(run_id)
            status = (await reader.runs())[0].status
    print(f"{args.kills} kills at a {100 * share:.0f}% cap (${cap:.4f}): the provider billed ${sum(billed):.4f} "
          f"({100 * sum(billed) / cap:.1f}% of the cap), the journal holds ${journaled:.4f} spent and ${lost:.4f} "
          f"lost in flight; the run ended {status}", flush=True)
    return {"cap_usd": cap, "billed_usd": sum(billed), "journaled_usd": journaled, "lost_usd": lost}


SHIFTBENCH = [sys.executable, "-m", "runner.cli"]
REPLY_S = 0.3
"""How late the mock answers in `--kills`: each kill then finds calls answered (billed) but not journaled."""


async def _the_run(journal: Path) -> str:
    """The journal's run, '' before one was journaled."""
    try:
        async with read_only(journal) as reader:
            runs = await reader.runs()
    except JournalError:
        return ""
    return runs[0].run_id if runs else ""


def _cli(folder: Path, base_url: str, kind: str, price: Price, args: argparse.Namespace, budget: float | None,
         journal: Path) -> list[str]:
    """`shiftbench run` of the sweep on the mock, from a sweep file written for it."""
    name = "mock-openai"
    lines = [f'models = ["{name}"]', f"methods = {args.methods.split(',')}", f"scenarios = {args.scenarios.split(',')}",
             f'dataset = "{folder / "suite"}"', f"pilot = {args.pilot}", "concurrency = 32",
             *([f"budget = {budget!r}"] if budget is not None else []),
             f'[endpoints."{name}"]', f'kind = "{kind}"', 'model = "openai-mock"', f'base_url = "{base_url}/v1"',
             f'[prices."{name}"]', *(f"{field} = {value!r}" for field, value in asdict(price).items()
                                     if isinstance(value, float))]
    sweep = folder / f"{journal.stem}.toml"
    sweep.write_text("\n".join(lines).replace("'", '"') + "\n")
    return [*SHIFTBENCH, "run", "--config", str(sweep), "--journal", str(journal), "--display", "none"]


def render(rows: Sequence[CapRow], full: float) -> str:
    lines = [f"| mode | cap (of ${full:.2f}) | spent / cap | finished / perfect-information stop | "
             "finished / finish-order count | over cap | status | wall |", "|---|---:|---:|---:|---:|---|---|---:|"]
    for r in rows:
        lines.append(f"| {r.mode} | {100 * r.share:.0f}% (${r.cap_usd:.2f}) | {100 * r.spent_share:.1f}% | "
                     f"{r.finished:,} / {r.perfect:,} ({100 * r.finished_share:.1f}%) | "
                     f"{r.finished:,} / {r.perfect_by_finish:,} ({100 * r.finish_order_share:.1f}%) | "
                     f"{'OVER' if r.spent_usd > r.cap_usd else 'no'} | {r.status} | {r.wall_s:.0f} s |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.budget_caps", description=__doc__.split("\n\n")[0])
    parser.add_argument("--caps", default="10,25,50,75,90", help="caps in percent of the uncapped run's cost")
    parser.add_argument("--modes", default="live,batch")
    parser.add_argument("--methods", default="blind,oracle,tabular")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--pilot", type=int, default=0, help="N tasks of each window per phase (0: every task)")
    parser.add_argument("--latency", type=float, default=3.0, help="seconds from a batch's creation to its end")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--kills", type=int, default=0, help="kill and resume a capped run this many times")
    parser.add_argument("--seed", type=int, default=0, help="the kills' random moments")
    parser.add_argument("--keep", type=Path, help="keep the runs' journals in this folder (default: a temporary one)")
    args = parser.parse_args(argv)
    shares = [float(c) / 100 for c in args.caps.split(",")]
    os.environ.setdefault("OPENAI_API_KEY", _KEY)  # the loopback mock's; nothing leaves the machine
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="budget-caps-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        suite = folder / "suite"
        build_suite(suite)
        if args.kills:
            out = {"kills": [anyio.run(killed_and_resumed, suite, folder, args, share) for share in shares]}
            if args.json:
                args.json.write_bytes(orjson.dumps(out, option=orjson.OPT_INDENT_2))
            return 0
        for mode in args.modes.split(","):
            full, rows = measure(suite, folder, mode, shares, args)
            print(f"\n{render(rows, full)}\n\n(load average {os.getloadavg()[0]:.1f}; "
                  f"{time.strftime('%Y-%m-%d %H:%M %Z')})\n", flush=True)
            out[mode] = {"full_usd": full, "rows": [asdict(r) for r in rows]}
            if args.json:
                args.json.write_bytes(orjson.dumps(out, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

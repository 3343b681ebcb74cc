"""The loopback mock provider in a process of its own, so that its work (parsing requests, framing
replies) does not share the benchmarked event loop, as a real provider's would not.

    python -m bench.mock_server --latency 0.1 --turns 3     # prints its base URL, serves until stdin closes
    python -m bench.mock_server --die-after 40              # the process exits once it has answered 40 calls
    python -m bench.mock_server --asked-delay               # each request names its own delay (below)
    python -m bench.mock_server --batch-latency 3           # its batches end 3 s after creation
    python -m bench.mock_server --no-batch-api              # batch routes answer 404 (llama.cpp, vLLM)

Batch settings (bench/mock_batches.py): `--batch-latency`, `--batch-error-fraction`, `--batch-expire-after`;
`GET /_mock/batch_submissions` reads how often each custom id was submitted.

`mock_process()` starts it, reads the URL and stops it on exit (by its own pid).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from anyio.streams.text import TextReceiveStream

from bench.mock_provider import (
    BatchSettings,
    MockProvider,
    Recorded,
    Reply,
    Responder,
    Response,
    serve_mock,
    tool_loop,
)

__all__ = ["ASKED_DELAY", "asked_delay", "delayed", "main", "mock_process"]

_ROOT = Path(__file__).resolve().parent.parent


def delayed(inner: Responder, latency_s: float) -> Responder:
    """`inner`'s replies, each sent `latency_s` late (the model's time to answer)."""

    def respond(request: Recorded) -> Response:
        reply = inner(request)
        return dataclasses.replace(reply, delay_s=latency_s) if isinstance(reply, Reply) else reply

    return respond


_DEFAULT_BATCH = BatchSettings()

ASKED_DELAY = "delay_s="
"""A request whose last message starts `delay_s=1.25 ...` is answered that many seconds late (with
`--asked-delay`): the caller then knows each reply's delay and can subtract it from what it observed."""


def asked_delay(inner: Responder, latency_s: float) -> Responder:
    """`inner`'s replies, each as late as its request asks (else `latency_s`)."""

    def respond(request: Recorded) -> Response:
        reply = inner(request)
        messages = request.body.get("messages") if isinstance(request.body, dict) else None
        text = messages[-1].get("content") if isinstance(messages, list) and messages else None
        delay = latency_s
        if isinstance(text, str) and text.startswith(ASKED_DELAY):
            delay = float(text.removeprefix(ASKED_DELAY).split(maxsplit=1)[0])
        return dataclasses.replace(reply, delay_s=delay) if isinstance(reply, Reply) else reply

    return respond


async def _serve(latency_s: float, turns: int, die_after: int | None = None, asked: bool = False,
                 batch: BatchSettings | None = None) -> None:
    timing = asked_delay if asked else delayed
    async with serve_mock(timing(tool_loop(calls_before_finish=turns - 1), latency_s)) as mock:
        mock.die_after = die_after
        mock.batches.offered = batch is not None
        mock.batches.settings = batch or BatchSettings()
        print(mock.base_url, flush=True)
        async with anyio.create_task_group() as group:
            group.start_soon(_until_stdin_closes, group.cancel_scope)
            group.start_soon(_until_dead, mock, group.cancel_scope)


async def _until_stdin_closes(scope: anyio.CancelScope) -> None:
    stdin = anyio.wrap_file(sys.stdin)
    while await stdin.readline():
        pass  # serve until the parent closes our stdin (or goes away)
    scope.cancel()


async def _until_dead(mock: MockProvider, scope: anyio.CancelScope) -> None:
    """A server told to die (`--die-after`) takes its process with it, as a crashed replica would."""
    await mock.wait_dead()
    scope.cancel()


@asynccontextmanager
async def mock_process(latency_s: float, turns: int, die_after: int | None = None,
                       asked_delay: bool = False, batch: BatchSettings | None = _DEFAULT_BATCH
                       ) -> AsyncIterator[str]:
    """Start the mock in a child process; yield its base URL. With `die_after`, the process exits once it
    has answered that many calls. `batch`: its batch APIs' settings (latency, error fraction, expiry);
    None: it offers no batch API."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "bench.mock_server", "--latency", str(latency_s), "--turns", str(turns)]
    command += ["--die-after", str(die_after)] if die_after is not None else []
    command += ["--asked-delay"] if asked_delay else []
    command += _batch_flags(batch)
    async with await anyio.open_process(command, env=env, stderr=None) as process:
        try:
            assert process.stdout is not None
            url = ""
            async for text in TextReceiveStream(process.stdout):
                url += text
                if "\n" in url:
                    break
            if not url.startswith("http://127.0.0.1:"):
                raise RuntimeError(f"the mock server did not start (it said {url!r})")
            yield url.strip()
        finally:
            with anyio.CancelScope(shield=True):
                if process.stdin is not None:
                    await process.stdin.aclose()
                with anyio.move_on_after(5):
                    await process.wait()
                if process.returncode is None:
                    process.terminate()
                    await process.wait()


def _batch_flags(batch: BatchSettings | None) -> list[str]:
    if batch is None:
        return ["--no-batch-api"]
    if batch.errored or batch.fail:
        raise ValueError("errored ids and whole-batch failures are set in process (mock.batches.settings)")
    flags = ["--batch-latency", str(batch.latency_s), "--batch-error-fraction", str(batch.error_fraction)]
    return flags + (["--batch-expire-after", str(batch.expire_after)] if batch.expire_after is not None else [])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mock_server")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--turns", type=int, default=3, help="turns an episode (tool calls before finish + 1)")
    parser.add_argument("--die-after", type=int, default=None, help="exit once this many calls are answered")
    parser.add_argument("--asked-delay", action="store_true",
                        help=f"a request whose last message starts '{ASKED_DELAY}<seconds>' waits that long")
    parser.add_argument("--batch-latency", type=float, default=0.0, help="seconds until a batch ends")
    parser.add_argument("--batch-error-fraction", type=float, default=0.0, help="share of batch items that error")
    parser.add_argument("--batch-expire-after", type=int, default=None,
                        help="batches expire with only this many items done")
    parser.add_argument("--no-batch-api", action="store_true", help="answer the batch routes 404")
    args = parser.parse_args(argv)
    batch = None if args.no_batch_api else BatchSettings(latency_s=args.batch_latency,
                                                          error_fraction=args.batch_error_fraction,
                                                          expire_after=args.batch_expire_after)
    try:
        anyio.run(_serve, args.latency, args.turns, args.die_after, args.asked_delay, batch,
                  backend_options={"use_uvloop": True})
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

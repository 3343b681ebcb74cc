"""llama.cpp's HTTP server from the `xllamacpp` wheel (prebuilt CPU builds of llama.cpp with its server),
in a process of its own until it is terminated:

    python -m bench.llama_server --model FILE.gguf --port 8080 [--ctx 8192] [--slots 1] [--threads 1]
                                 [--chat-template-file bench/chatml_tools.jinja]

The same server `llama-server` is, started with `-c CTX -np SLOTS -t THREADS --jinja` on 127.0.0.1 (its
/props, /slots and /metrics pages on), with no build step: `pip install xllamacpp` is the whole install.
Used by `bench/local_server.py`; not part of CI.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.llama_server", description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--chat-template-file", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        import xllamacpp  # an optional benchmark dependency, never one of the project's
    except ImportError:
        raise SystemExit("bench.llama_server needs xllamacpp: pip install xllamacpp") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = args.slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True
    params.endpoint_slots = params.endpoint_props = params.endpoint_metrics = True
    if args.chat_template_file is not None:
        params.chat_template = args.chat_template_file.read_text()
    server = xllamacpp.Server(params)  # listens from here on
    print(f"llama.cpp server (xllamacpp {xllamacpp.__version__}) on {server.listening_address}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    del server
    sys.exit(0)


if __name__ == "__main__":
    main()

"""`probe`: one tiny request per model, and with `--full` what an OpenAI-compatible server supports and
whether an endpoint offers a batch API (the `batch API` row: `--batch tests` needs one, else runs live).

The same client a run uses sends the requests, so what the probe finds is what the run will meet; the
settings it prints are the `[endpoints.X]` table to paste into a sweep file.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.cli.parsing import Command, positive, run_async
from runner.models.compat_sizes import CONTEXT_PROBE_TOKENS

if TYPE_CHECKING:
    from runner.config.settings import SweepConfig
    from runner.models.registry import ModelEntry

__all__ = ["PROBE_COMMANDS", "add_probe_parser"]


def add_probe_parser(commands: Any) -> None:
    probe = commands.add_parser("probe", help="send one tiny request to each model (checks endpoint and key)")
    probe.add_argument("models", nargs="+", help="model names, as --models takes them")
    probe.add_argument("--config", type=Path, help="a sweep file, for its named endpoints")
    probe.add_argument("--full", action="store_true",
                       help="check what an OpenAI-compatible server supports (tool calls streamed or not, usage, "
                            "tool results, content null, context length, batch API) and print the sweep-file settings")
    probe.add_argument("--context-tokens", type=positive, default=CONTEXT_PROBE_TOKENS,
                       help=f"size of --full's long-context request (default {CONTEXT_PROBE_TOKENS:,})")


def _cmd_probe(args: argparse.Namespace) -> int:
    from runner.config.settings import SweepConfig, load_config_file
    from runner.models.endpoints import check_endpoint_tables

    config = load_config_file(args.config) if args.config else SweepConfig()
    check_endpoint_tables(args.config or Path("flags"), config.endpoints)
    config = replace(config, models=tuple(args.models), allow_unpriced=True).validate("flags")
    run_async(_probe, config, args.full, args.context_tokens)
    return 0


async def _probe(config: SweepConfig, full: bool, context_tokens: int) -> None:
    from runner.common.tables import say_fitted
    from runner.models.probe import probe_models
    from runner.models.registry import build_models, close_models

    models = build_models(config)
    for entry in models.values():
        if entry.offline:
            say_fitted(f"Probe: {entry.name} is in-process, nothing to reach.")
    try:
        await probe_models(models.values(), say_fitted)
        if full:
            for entry in models.values():
                await _full_probe(config, entry, context_tokens)
    finally:
        await close_models(models)


async def _full_probe(config: SweepConfig, entry: ModelEntry, context_tokens: int) -> None:
    from runner.common.tables import say_fitted, terminal_width, wrap_prose
    from runner.models.compat import CAPABILITIES, check_compatibility, render_compatibility, sweep_settings
    from runner.models.endpoints import endpoint_of
    from runner.providers import AnthropicClient, OpenAICompatClient
    from runner.providers.batch_probe import batch_support, render_batch_support

    if entry.offline:
        return
    width = max(len(c) for c in CAPABILITIES)
    # A table row's detail wraps under the detail column: "  capability  mark  detail".
    under = " " * (width + len("  yes  "))

    def table(text: str) -> None:
        print(wrap_prose(text, terminal_width(), under))

    if isinstance(entry.probe, AnthropicClient):
        say_fitted(f"Probe --full: {entry.name} speaks Anthropic Messages, whose tool calls, usage and limits are "
                   "documented; the full check is for OpenAI-compatible servers.")
        table(render_batch_support(await batch_support(entry.probe), width))
        return
    if not isinstance(entry.probe, OpenAICompatClient):
        return
    found = await check_compatibility(entry.probe, context_tokens)
    endpoint = endpoint_of(entry.name, config.endpoints)
    table("\n" + render_compatibility(found))
    table(render_batch_support(await batch_support(entry.probe), width))
    print("\nSweep file settings for it:\n")
    # As it is: TOML to paste into a sweep file, where a wrapped comment would be a syntax error.
    print(sweep_settings(entry.name, endpoint.kind, endpoint.model, endpoint.base_url, found))


PROBE_COMMANDS: dict[str, Command] = {"probe": _cmd_probe}

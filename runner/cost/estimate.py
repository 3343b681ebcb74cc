"""What a full sweep will cost: the table `--pilot N` prints when the pilot ends and `shiftbench estimate`
prints from any run's journal without spending anything. Both read the same rows through the same
projection (`runner.cost.projection`), so the same journal gives the same numbers.

`estimate` projects the models, methods and scenarios asked for (by default the run's own) over the
run's dataset without its pilot cut, priced from the run's table (`runner/prices.toml` with the run's
overrides). A model the run did not call is re-priced from the run's first model with episodes of the
method, and the row says so; a model with no price, or a method the run has no episode of, is refused,
and so is a paid model projected from calls that carry no tokens (the offline scripted model's): its
projection would be a $0.00 that looks measured, so the message points to a pilot on the target model
instead. An offline target (every `scripted:*` costs $0) is projected at its price, and said to be offline.

With batching (`estimate --batch tests`, or the run's own `batch` setting: `runner.cost.batch_setting`),
each row also carries the projection with its test calls at the model's batch price, and the saving; a
batched model without a batch price is named, its test calls projected live.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import orjson

from runner.common.tables import terminal_width, text_table, wrap_prose
from runner.config.plan import Stream, plan_streams
from runner.config.prices import PriceTable
from runner.config.settings import config_from_json
from runner.cost.batch_setting import batched_models
from runner.cost.cache_savings import run_price_table
from runner.cost.cap_buys import cap_buys
from runner.cost.pricing import is_offline_model
from runner.cost.projection import BOOTSTRAP_DRAWS, Cell, Measured, ProjectedRow, measured, project
from runner.journal import Reader, RunRow, read_only
from simulators.dataset import load_dataset, scenario_names
from simulators.errors import ShiftbenchInputError

__all__ = ["NothingToProject", "estimate_command", "full_counts", "offline_note", "projection_rows",
           "render_projection", "run_projection"]

StreamKey = tuple[str, str]


class NothingToProject(ShiftbenchInputError):
    """The run's calls carry no tokens (the offline scripted models count none): a projection from them
    would read $0.00 for any model, a figure that looks measured and is not."""


def _tokens(found: Measured) -> int:
    return sum(usage.input_tokens + usage.output_tokens for episode in found.episodes for _, usage in episode.calls)


def _no_tokens(sources: Sequence[StreamKey], models: Sequence[str], methods: Sequence[str]) -> NothingToProject:
    streams = ", ".join(f"{model}/{method}" for model, method in sources)
    targets = [model for model in models if not model.startswith("scripted")] or ["MODEL"]
    return NothingToProject(
        f"estimate: the calls of {streams} carry no tokens (the offline scripted model counts none), so there is "
        f"nothing to project a cost from; run a pilot on the target model instead, e.g. `shiftbench run --models "
        f"{','.join(targets)} --methods {','.join(methods)} --pilot 3 --budget 5`")


def full_counts(streams: Sequence[Stream]) -> dict[str, dict[Cell, int]]:
    """Method -> (scenario, phase) -> episodes of one model's sweep without the pilot cut (serving only
    where the method learns; each test task once per repeat; everything once per stream replica)."""
    counts: dict[str, dict[Cell, int]] = defaultdict(dict)
    for s in streams:
        cells = counts[s.method]
        cells[(s.scenario.name, "serving")] = (len(s.scenario.serving) if s.serving else 0) * s.replicas
        cells[(s.scenario.name, "test")] = len(s.scenario.test) * s.repeats * s.replicas
    return dict(counts)


async def measure(reader: Reader, run_id: str) -> dict[StreamKey, Measured]:
    return measured(await reader.episode_calls(run_id), await reader.method_calls(run_id))


def projection_rows(measures: Mapping[StreamKey, Measured], models: Sequence[str], methods: Sequence[str],
                    counts: Mapping[str, Mapping[Cell, int]], prices: PriceTable,
                    batched: Callable[[str], bool] | None = None) -> list[ProjectedRow]:
    """One row per (model, method); raises ShiftbenchInputError naming a model without a price or a
    method the run has no episode of. `batched`: the models whose test calls go through a batch API."""
    unknown = [model for model in models if model not in prices]
    if unknown:
        raise ShiftbenchInputError(f"--models: no price for '{unknown[0]}' in runner/prices.toml or the run's "
                                   "[prices]; name a priced model (see runner/prices.toml)")
    rows = []
    silent: list[StreamKey] = []
    for method in methods:
        sources = [model for (model, m), found in measures.items() if m == method and found.episodes]
        if not sources:
            raise ShiftbenchInputError(f"--methods: the run has no finished episode of method '{method}' to "
                                       "project from; name a method it ran")
        for model in models:
            source = model if (model, method) in measures and measures[(model, method)].episodes else sources[0]
            # An offline target costs $0 whatever its tokens; only a paid one needs tokens to project from.
            if not _tokens(measures[(source, method)]) and not is_offline_model(model):
                silent.append((source, method))
            rows.append(project(measures[(source, method)], model, method, source, counts.get(method, {}), prices,
                                batched))
    if silent:
        raise _no_tokens(list(dict.fromkeys(silent)), models, methods)
    return rows


def render_projection(rows: Sequence[ProjectedRow], width: int | None = None) -> str:
    """The projection table and what it means; `width`: the terminal's (None: natural, for pipes and files)."""
    headers = ["model", "method", "episodes", "turns/ep", "in tok/turn", "cache hit", "$/episode", "projected $",
               "95% range", "uncached $", "measured from"]
    table = [[r.model, r.method, f"{r.episodes:,}", f"{r.turns_per_episode:.1f}", f"{r.input_tokens_per_turn:,.0f}",
              "-" if r.hit_rate is None else f"{100 * r.hit_rate:.0f}%", f"{r.usd_per_episode:.4f}",
              f"{r.projected_usd:,.2f}", f"{r.low_usd:,.2f} - {r.high_usd:,.2f}", f"{r.uncached_usd:,.2f}",
              f"{r.measured_episodes} episodes" if not r.repriced else f"RE-PRICED from {r.source}"]
             for r in rows]
    total = sum(r.projected_usd for r in rows)
    low, high = sum(r.low_usd for r in rows), sum(r.high_usd for r in rows)
    lines = [text_table(headers, table, "llrrrrrrrrl", width),
             f"total ${total:,.2f} (rows' ranges summed: ${low:,.2f} - ${high:,.2f}); uncached "
             f"${sum(r.uncached_usd for r in rows):,.2f}",
             f"Per (scenario, phase): the full sweep's episodes x the measured episodes' mean cost at the run's "
             f"prices, plus the method's own calls per serving episode. Range: 95% bootstrap over the measured "
             f"episodes ({BOOTSTRAP_DRAWS} draws, seed 0). Uncached: the same tokens with every prompt token at "
             "the input price."]
    if any(r.repriced for r in rows):
        lines.append("RE-PRICED rows: a model the run did not call, projected from another model's tokens, turns "
                     "and cache hit rate at its own prices; its own behaviour may differ.")
    return "\n".join([lines[0], *(wrap_prose(line, width) for line in lines[1:]), *batch_lines(rows, width)])


def batch_lines(rows: Sequence[ProjectedRow], width: int | None = None) -> list[str]:
    """With batching: live vs batched per row and in all, the saving, and any batched model without a
    batch price (its test calls are projected live, and `run --batch tests` refuses it); laid out to
    `width` (None: natural)."""
    batched = [r for r in rows if r.batched_usd is not None]
    if not batched:
        return []
    headers = ["model", "method", "live $", "batched $", "95% range", "saved $", "saved"]
    table = [[r.model, r.method, f"{r.projected_usd:,.2f}", f"{r.batched_usd or 0.0:,.2f}",
              f"{r.batched_low_usd or 0.0:,.2f} - {r.batched_high_usd or 0.0:,.2f}",
              f"{r.batch_saving_usd or 0.0:,.2f}", _share(r.batch_saving_usd or 0.0, r.projected_usd)]
             for r in batched]
    live = sum(r.projected_usd for r in rows)
    total = sum(r.batched_usd if r.batched_usd is not None else r.projected_usd for r in rows)
    lacking = sorted({name for r in rows for name in r.no_batch_price})
    prose = [f"total live ${live:,.2f}, batched ${total:,.2f}: batching saves ${live - total:,.2f} "
             f"({_share(live - total, live)})",
             *(f'{name} has no batch price, so its test calls are projected live; `run --batch tests` refuses it '
               f'until runner/prices.toml or the sweep file gives [prices."{name}".batch]' for name in lacking)]
    return ["", wrap_prose("With --batch tests (test episodes' agent and judge calls at the batch price; serving "
                           "and the methods' own calls stay live):", width),
            text_table(headers, table, "llrrrrr", width), *(wrap_prose(line, width) for line in prose)]


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def projection_json(rows: Sequence[ProjectedRow]) -> str:
    return orjson.dumps([{**_fields(r), "repriced": r.repriced, "batch_saving_usd": r.batch_saving_usd}
                         for r in rows], option=orjson.OPT_INDENT_2).decode()


def _fields(row: ProjectedRow) -> dict[str, object]:
    return {name: getattr(row, name) for name in ProjectedRow.__dataclass_fields__}


async def run_projection(reader: Reader, run: RunRow, streams: Sequence[Stream], models: Sequence[str],
                         methods: Sequence[str], batched: Callable[[str], bool] | None = None) -> list[ProjectedRow]:
    return projection_rows(await measure(reader, run.run_id), models, methods, full_counts(streams),
                           run_price_table(run.config), batched)


# ----------------------------------------------------------------------------------------- estimate

async def estimate_command(journal: Path, run_id: str | None, models: Sequence[str] | None,
                           methods: Sequence[str] | None, scenarios: Sequence[str] | None, as_json: bool,
                           batch: str | None = None, budget: float | None = None) -> str:
    """`batch`: 'tests' or 'off' instead of the run's own setting (None: the run's). `budget`: a cap to
    say what it buys of the projected sweep."""
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise ShiftbenchInputError(f"--budget: {budget} is not a cap; give a positive amount in USD, e.g. --budget 5")
    if budget is not None and as_json:
        raise ShiftbenchInputError("--budget: what a cap buys is said in the text output; drop --json to read it "
                                   "(the JSON rows hold each row's projected $ to divide it by)")
    async with read_only(journal) as reader:
        run = await _run(reader, journal, run_id)
        config = config_from_json(run.config)
        models = list(models or config.models)
        if methods:
            config = replace(config, methods=tuple(methods)).validate("--methods")
        methods = list(config.methods)
        names = list(scenarios or config.scenarios)
        known = scenario_names(Path(run.dataset_path))
        missing = [name for name in names if name not in known]
        if missing:
            raise ShiftbenchInputError(f"--scenarios: run {run.run_id}'s dataset ({run.dataset_path}) has no "
                                       f"scenario '{missing[0]}'; it has {', '.join(known)}")
        dataset = load_dataset(run.dataset_path, only=names)
        streams = plan_streams(models, methods, [dataset.scenarios[n] for n in names],
                               learns=config.learns(), repeats=config.repeats,
                               replicas=config.replicas)
        rows = await run_projection(reader, run, streams, models, methods, batched_models(config, batch))
    if as_json:
        return projection_json(rows)
    width = terminal_width()  # laid out as the pilot's own table was (a pipe: natural widths)
    head = f"Estimate of the full sweep from run {run.run_id} ({', '.join(names)}); nothing is sent."
    buys = ""
    if budget is not None:
        buys = "\n" + wrap_prose(cap_buys(rows, budget, [len(s.windows()) for s in streams]), width)
    return (wrap_prose(head, width) + "\n" + render_projection(rows, width) + buys
            + wrap_prose(offline_note(models, methods), width))


def offline_note(models: Sequence[str], methods: Sequence[str]) -> str:
    """Said when every model projected is an offline scripted one: its $0.00 is the price, not a measure."""
    if not all(is_offline_model(model) for model in models):
        return ""
    return ("\nOffline: the scripted models cost nothing at any size, so $0.00 is their price, not a measurement; "
            "for what a paid model would cost, run a pilot on it, e.g. `shiftbench run --models MODEL --methods "
            f"{','.join(methods)} --pilot 3 --budget 5`")


async def _run(reader: Reader, journal: Path, run_id: str | None) -> RunRow:
    if run_id is None:
        runs = await reader.runs()
        if not runs:
            raise ShiftbenchInputError(f"{journal}: no runs in this journal to estimate from; run a pilot first "
                                       "(`shiftbench run --pilot 3 ...`)")
        return runs[0]
    run = await reader.run(run_id)
    if run is None:
        raise ShiftbenchInputError(f"{journal}: no run '{run_id}' in this journal; "
                                   f"`shiftbench runs --journal {journal}` lists the runs it holds")
    return run

"""A sweep's configuration: from flags or a TOML file, validated where it enters, hashed for resume.

The hash covers what decides results (models and their endpoints, methods with their specs and
options, scenarios, dataset, block size, seed, pilot, repeats, replicas, judge, the episode and call
settings), not how fast, how dear or where they are written (concurrency, budget, prices, journal path,
display), so a resumed run may change the latter freely.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from runner.common.toml_tables import Field, check_table, described, read_toml, refuse_unknown, suggestion
from runner.config.batch_settings import BatchSettings, batch_settings, check_batch_mode
from runner.config.endpoint_keys import check_endpoint_keys
from runner.config.method_env import check_env_names
from runner.config.methods import methods_from_file, normalize_methods, resolve_methods
from runner.config.prices import parse_model_prices
from simulators.errors import ShiftbenchInputError
from simulators.protocol import SCENARIOS

if TYPE_CHECKING:
    from methods.spec import ResolvedMethod

__all__ = ["RESULT_KEYS", "SWEEP_FIELDS", "TOP_TABLES", "SweepConfig", "allowed_range", "config_from_json",
           "config_hash", "load_config_file", "stored_config_hash"]

RESULT_KEYS = ("models", "methods", "scenarios", "dataset", "block_size", "seed", "pilot", "judge", "endpoints",
               "repeats", "max_tokens", "max_turns", "temperature", "call_timeout", "replicas", "method_specs",
               "batch", "batch_settings")
_HASHED_WHEN_SET = ("max_turns", "temperature", "call_timeout", "replicas", "method_specs", "batch", "batch_settings")
"""Keys added after runs were journaled: hashed only when they differ from their default, so a run
journaled before they existed (its stored hash covers none of them) still resumes."""


@dataclass(frozen=True)
class SweepConfig:
    models: tuple[str, ...] = ("scripted",)
    methods: tuple[str, ...] = ("blind", "oracle")
    """The names the sweep runs its methods under (`runner.config.methods`)."""
    method_specs: Mapping[str, Any] = field(default_factory=dict)
    """Per method name that is not a bare registry name: `{"from": SPEC, "options": {...}}`, from
    `--methods NAME=SPEC` or a sweep file's `[methods.NAME]` tables."""
    scenarios: tuple[str, ...] = SCENARIOS
    dataset: str = ""
    """A dataset directory; empty means the built-in suite (built on first use)."""
    seed: int = 0
    """Seed of the built-in suite."""
    block_size: int = 1
    concurrency: int = 64
    """Model calls in flight across the run."""
    model_concurrency: int = 32
    """Model calls in flight per model."""
    max_episode_attempts: int = 3
    """An episode hit by infrastructure failures is run at most this many times (while its failed request
    still has attempts left) before the run stops."""
    max_request_attempts: int = 6
    """Attempts one request body may make in the whole run, client retries and episode re-runs together."""
    breaker_failures: int = 5
    """Breaker failures in a row (5xx, timeouts, dropped connections) that pause an endpoint: calls then wait
    while one probe at a time tests it."""
    endpoint_down_after_s: float = 900.0
    """An endpoint paused this long is down: the run stops, resumable."""
    max_tokens: int = 4096
    """Output tokens per model call at most (an endpoint's own `max_tokens` wins for its model); a call
    reserves its worst case from it, so it decides how many calls a budget admits at once."""
    max_turns: int = 100
    """Model turns per episode at most; an episode that reaches it ends `turn_limit` and is graded."""
    temperature: float | None = None
    """Sampling temperature of every call to the sweep's models; None: not sent, each provider's default
    (some models refuse the field, so it goes only where a user asked for it)."""
    call_timeout: float = 900.0
    """Seconds one attempt of a model call may take, first byte to last, before it fails as a timeout (and
    is retried). A stream that goes silent is cut sooner, by the stall timeout. Hashed: a shorter timeout
    turns slow answers into retries, i.e. other samples."""
    pilot: int = 0
    """When > 0: only the first N serving and N test tasks of each window."""
    repeats: int = 1
    """Runs of each test task (`--repeats K`): reports add the spread between repeats and pass^k."""
    replicas: int = 1
    """Independent streams of every (model, method, scenario) (`--replicas K`), each with its own serving
    stream, method state and sampling seed: reports measure the noise between them."""
    journal: str = ""
    budget: float | None = None
    """Hard cap on the run's spend in USD; None: no cap. Raising it on resume continues the run."""
    allow_unpriced: bool = False
    """Run models with no known price (their spend counts only what the provider reports)."""
    judge: str = ""
    """The pitch judge: empty for the offline deterministic judge, or a model name (LLM judge)."""
    prices: Mapping[str, Any] = field(default_factory=dict)
    """Price overrides, `[prices."model"]` tables, merged over the shipped table."""
    endpoints: Mapping[str, Any] = field(default_factory=dict)
    """Named endpoints, `[endpoints.NAME]` tables: kind, model, base_url, api_key_env."""
    plan: Mapping[str, Any] = field(default_factory=dict)
    """The locked plan a run follows (`run --plan`): its hashes and amendments, shown by every report.
    Set by `runner.evidence.plan_lock` only, never read from a sweep file."""
    shards: int = 0
    """How many shards the sweep is split into, for `run --shard auto` where the scheduler does not say
    it (a Kubernetes Indexed Job); 0: not given. A shard journals its count here. Not hashed."""
    labels: tuple[str, ...] = ()
    """Free text that says what the run is for (`run --label`), shown by `shiftbench runs`; not hashed."""
    methods_in_process: bool = False
    """Run a user's methods in the runner's own process (to step through one in a debugger) instead of a
    worker process each; recorded in the run's provenance, not hashed (results do not change)."""
    method_context_limit: float = 60.0
    """Seconds one `context` call of a method may take before its stream stops with `method_error`."""
    method_learn_limit: float = 900.0
    """Seconds one `learn` call (a block) may take, and build, state and load, before the stream stops."""
    method_reads: tuple[str, ...] = ()
    """Folders a worker's method may read beside its own source and the Python installation."""
    method_env: tuple[str, ...] = ()
    """Names of environment variables a worker gets beside the worker environment
    (`runner.workers.environment`); their values come from the runner's environment."""
    method_memory: float = 4096.0
    """MB of address space a worker may take (`runner.workers.limits`)."""
    method_output_size: float = 16.0
    """MB a worker may print over its life (into its output.log)."""
    method_state_size: float = 64.0
    """MB one `state()` may take as JSON."""
    method_context_size: float = 4.0
    """MB one `context` text may take."""
    method_workers: int = 0
    """The most streams served at once whose user method runs in a worker on an offline model
    (`runner.schedule.stream_slots`); 0: twice the cores. Not hashed (results do not change)."""
    batch: str = "off"
    """"tests": test episodes' model calls (agent and judge) go through their endpoint's batch API
    (`runner.config.batch_settings`); an endpoint's own `batch` overrides it for its models. Hashed when set."""
    batch_settings: Mapping[str, Any] = field(default_factory=dict)
    """The sweep file's `[batch]` table as written (thresholds, polling, failures, start); checked by
    `runner.config.batch_settings`, read through `batching()`."""

    def validate(self, source: str) -> SweepConfig:
        """Raise one clear error naming `source` (a file or `flags`) for the first problem found: every
        number finite, of the right type and in range, before anything is written. Methods come back
        normalized (a spec named on the command line becomes a name and its entry), each resolved."""
        where = "--methods" if source == "flags" else source
        methods, specs = normalize_methods(self.methods, self.method_specs, where, Path.cwd(), self.methods_in_process,
                                           self.method_env)
        resolve_methods(methods, specs, where, self.methods_in_process, self.method_env)
        return replace(self, methods=methods, method_specs=specs)._checked(source)

    def _checked(self, source: str) -> SweepConfig:
        _check_names(source, "scenarios", self.scenarios, list(SCENARIOS), allow_other=bool(self.dataset))
        if not self.models:
            raise ShiftbenchInputError(f"{source}: models is empty; name at least one (e.g. scripted)")
        for name, (low, high) in _INT_RANGES.items():
            _check_int(source, name, getattr(self, name), low, high)
        if self.budget is not None:
            _check_number(source, "budget", self.budget, "a positive number of USD")
        _check_number(source, "endpoint_down_after_s", self.endpoint_down_after_s, "a positive number of seconds")
        for field_name, (bottom, top, unit) in _NUMBER_RANGES.items():
            if not (field_name == "temperature" and self.temperature is None):  # unset: the provider's default
                _check_range(source, field_name, getattr(self, field_name), bottom, top, unit)
        for name in ("dataset", "journal", "judge"):
            if not isinstance(getattr(self, name), str):
                raise ShiftbenchInputError(f"{source}: {name} must be a string")
        if self.judge.split(":")[0] == "scripted":
            raise ShiftbenchInputError(f"{source}: judge '{self.judge}' cannot judge pitches (it is not a language "
                                       "model); leave judge empty for the offline judge, or name an LLM")
        for flag in ("allow_unpriced", "methods_in_process"):
            if not isinstance(getattr(self, flag), bool):
                raise ShiftbenchInputError(f"{source}: {flag} must be true or false")
        check_env_names(self.method_env, f"{source} method_env" if source != "flags" else "--method-env")
        parse_model_prices(self.prices, source)  # every [prices] table, whether or not its model runs
        check_batch_mode(source if source != "flags" else "--batch", "batch", self.batch)
        self.batching(f"{source} [batch]")
        return self

    def batching(self, where: str = "the run's config [batch]") -> BatchSettings:
        """The `[batch]` table as settings (defaults for what it leaves out)."""
        return batch_settings(self.batch_settings, where)

    def resolved_methods(self, source: str = "the run's config") -> dict[str, ResolvedMethod]:
        """Each method by name, resolved (a user's in a worker, its options bound)."""
        return resolve_methods(self.methods, self.method_specs, source, self.methods_in_process, self.method_env)

    def learns(self) -> Callable[[str], bool]:
        """Whether a method of this sweep learns (one that does not gets no serving stream)."""
        resolved = self.resolved_methods()
        return lambda name: resolved[name].spec.learns

    def results_view(self) -> dict[str, Any]:
        view = asdict(self)
        return {key: view[key] for key in RESULT_KEYS
                if key not in _HASHED_WHEN_SET or view[key] != _DEFAULTS[key]}


def config_from_json(text: str) -> SweepConfig:
    """The config as the journal stored it (lists back to tuples)."""
    raw: dict[str, Any] = orjson.loads(text)
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    return SweepConfig(**values)


def config_hash(config: SweepConfig) -> str:
    return _digest(config.results_view())


def stored_config_hash(text: str) -> str:
    """The hash of a config as the journal stored it, over the keys it stored: a run journaled by a version
    before a key existed (`max_tokens`, say) was hashed without it, and must still resume (with that key's
    default), while any stored value edited since still changes the hash."""
    stored = orjson.loads(text)
    return _digest({key: value for key, value in config_from_json(text).results_view().items() if key in stored})


def _digest(view: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(view, option=orjson.OPT_SORT_KEYS)).hexdigest()


_INT_RANGES: dict[str, tuple[int, int]] = {
    "seed": (0, 2**32 - 1), "block_size": (1, 100_000), "concurrency": (1, 100_000),
    "model_concurrency": (1, 100_000), "max_episode_attempts": (1, 100), "max_request_attempts": (1, 100),
    "breaker_failures": (1, 10_000), "max_tokens": (1, 10_000_000), "pilot": (0, 10_000_000),
    "repeats": (1, 1_000), "max_turns": (1, 10_000), "shards": (0, 100_000), "replicas": (1, 1_000),
    "method_workers": (0, 100_000),
}
"""Integer fields and their allowed range (pilot 0 means off)."""

_NUMBER_RANGES: dict[str, tuple[float, float, str]] = {
    "temperature": (0.0, 2.0, ""), "call_timeout": (1.0, 86_400.0, " of seconds"),
    "method_context_limit": (0.01, 86_400.0, " of seconds"), "method_learn_limit": (0.01, 86_400.0, " of seconds"),
    "method_memory": (256.0, 1_048_576.0, " of MB"), "method_output_size": (0.001, 1_000_000.0, " of MB"),
    "method_state_size": (0.001, 100_000.0, " of MB"), "method_context_size": (0.001, 1_000.0, " of MB"),
}
"""Fields that take any number in a range (temperature may also be unset): name -> (low, high, unit)."""


def in_range(name: str, value: float) -> bool:
    """Whether `value` is within the field's range (the flags refuse the rest as they parse)."""
    low, high = _INT_RANGES[name] if name in _INT_RANGES else _NUMBER_RANGES[name][:2]
    return low <= value <= high


def allowed_range(name: str) -> str:
    """What a field accepts, in the words its error uses (for the flags' own messages)."""
    if name in _INT_RANGES:
        low, high = _INT_RANGES[name]
        return f"a whole number between {low} and {high}"
    low_f, high_f, unit = _NUMBER_RANGES[name]
    return f"a number{unit} from {low_f:g} to {high_f:g}"


def _check_int(source: str, name: str, value: object, low: int, high: int) -> None:
    # bool is an int to Python, never a count.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShiftbenchInputError(f"{source}: {name} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise ShiftbenchInputError(f"{source}: {name} must be between {low} and {high}, got {value}")


def _check_range(source: str, name: str, value: object, low: float, high: float, unit: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ShiftbenchInputError(f"{source}: {name} must be a number{unit} from {low:g} to {high:g}, got {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        raise ShiftbenchInputError(f"{source}: {name} must be a number{unit} from {low:g} to {high:g}, got {value}")


def _check_number(source: str, name: str, value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ShiftbenchInputError(f"{source}: {name} must be {what}, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ShiftbenchInputError(f"{source}: {name} must be {what}, got {value}")


def _check_names(source: str, key: str, names: tuple[str, ...], known: list[str], allow_other: bool = False) -> None:
    if not names:
        raise ShiftbenchInputError(f"{source}: {key} is empty; name at least one of {', '.join(known)}")
    for name in names:
        if name in known or allow_other:
            continue
        raise ShiftbenchInputError(f"{source}: unknown {key[:-1]} '{name}'{suggestion(name, known)}; "
                                   f"known: {', '.join(known)}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ShiftbenchInputError(f"{source}: {key} lists {duplicates} more than once")


_DEFAULTS: dict[str, Any] = {f.name: f.default if f.default_factory is MISSING else f.default_factory()
                             for f in fields(SweepConfig) if f.name in _HASHED_WHEN_SET}
_TUPLE_KEYS = {"models", "methods", "scenarios", "labels", "method_reads", "method_env"}
TOP_TABLES = ("prices", "endpoints")
"""Tables a sweep file may hold at its top level beside `[sweep]`."""
_KIND_OF_TYPE = {"int": "whole number", "str": "string", "bool": "true or false", "float": "number",
                 "float | None": "number", "Mapping[str, Any]": "table"}
_NOT_SWEEP_KEYS = ("plan", "method_specs", "batch_settings")
_EXAMPLES = {"models": 'models = ["scripted"]', "methods": 'methods = ["blind", "oracle"]',
             "scenarios": 'scenarios = ["retail_l1"]', "labels": 'labels = ["why this run"]',
             "method_reads": 'method_reads = ["/data/notes"]', "method_env": 'method_env = ["HF_HOME"]'}
SWEEP_FIELDS: dict[str, Field] = {
    f.name: Field("list of strings", _EXAMPLES[f.name]) if f.name in _TUPLE_KEYS
    else Field(_KIND_OF_TYPE[str(f.type)], ranged_later=True)  # validate() checks ranges, finiteness included
    for f in fields(SweepConfig) if f.name not in _NOT_SWEEP_KEYS}
"""A sweep file's keys and their kinds: SweepConfig's fields, except the plan a run is handed, the
method specs, which come from `[methods.NAME]` tables (`runner.config.methods`), and the batch settings,
which come from the `[batch]` table."""


def load_config_file(path: Path, other_tables: tuple[str, ...] = ()) -> SweepConfig:
    """A TOML sweep file: keys named as SweepConfig's fields at the top level or under [sweep] (then with
    [prices] and [endpoints] beside it), every key and value checked, used or not. `other_tables`: what
    else the file may hold beside [sweep] (a plan's [plan], [lock], [[amendment]])."""
    raw = read_toml(path, "the sweep file")
    if "sweep" in raw:
        if not isinstance(raw["sweep"], dict):
            raise ShiftbenchInputError(f"{path}: sweep must be a table ([sweep]); got {described(raw['sweep'])}")
        refuse_unknown(str(path), raw, {"sweep", "methods", "batch", *TOP_TABLES, *other_tables}, what="table")
        where, table = f"{path} [sweep]", dict(raw["sweep"])
        if "batch" in raw:
            table["batch_settings"] = _batch_table(path, raw["batch"])
        for key in TOP_TABLES:
            if key in raw and key in table:
                raise ShiftbenchInputError(f"{path}: {key} is given both at the top level and under [sweep]; "
                                           "keep one")
            table.setdefault(key, raw.get(key, {}))
    else:
        where, table = str(path), dict(raw)
        if isinstance(table.get("batch"), Mapping):  # the [batch] table; `batch = "tests"` needs [sweep] beside it
            table["batch_settings"] = _batch_table(path, table.pop("batch"))
    batch_table = table.pop("batch_settings", {})
    endpoints = table.get("endpoints")
    for name, endpoint in (endpoints.items() if isinstance(endpoints, Mapping) else ()):
        check_endpoint_keys(f"{path} [endpoints.{name}]", endpoint)
    for key, value in table.items():
        if key in _TUPLE_KEYS and isinstance(value, str):
            names = ", ".join(f'"{name.strip()}"' for name in value.split(",") if name.strip())
            raise ShiftbenchInputError(f'{where}: {key} must be a list of names, e.g. {key} = [{names}]; got the '
                                       f'string "{value}"')
    methods = methods_from_file(path, raw, table)  # [methods.NAME] tables (and the list naming them) taken out
    check_table(where, table, SWEEP_FIELDS)
    config = replace(SweepConfig(), **methods, **{key: _coerce(key, value) for key, value in table.items()},
                     batch_settings=batch_table)
    if config.dataset and not Path(config.dataset).is_absolute():
        config = replace(config, dataset=str((path.parent / config.dataset).resolve()))
    return config.validate(str(path))


def _batch_table(path: Path, table: Any) -> dict[str, Any]:
    """The `[batch]` table, checked with the file named."""
    if not isinstance(table, Mapping):
        raise ShiftbenchInputError(f"{path}: batch at the top level beside [sweep] must be the [batch] table; "
                                   f'put batch = "tests" under [sweep]')
    batch_settings(table, f"{path} [batch]")
    return dict(table)


def _coerce(key: str, value: Any) -> Any:
    """A checked TOML value as SweepConfig holds it (lists as tuples, numbers as floats where floats)."""
    if key in _TUPLE_KEYS:
        return tuple(value)
    if SWEEP_FIELDS[key].kind == "number":
        return float(value)
    return value

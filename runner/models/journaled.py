"""Every paid model call is journaled, and answered from the response cache when it was paid before.

The cache key covers the run, the unit and the whole request, so a resumed or re-queued episode that
asks the same questions again replays the answers it already paid for, while a new run (or another
unit that happens to send the same text) still gets a fresh sample.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Container

import anyio
import orjson

from runner.batching.answers import decode_answer, encode_answer
from runner.journal import Batch, Journal, ModelCallRow
from runner.journal.meta_keys import served_model_meta_key
from runner.models.batched import REQUEST_KEY
from runner.providers.taxonomy import InfrastructureError
from simulators.model_api import ModelClient, ModelRequest, ModelResponse, Purpose, Usage
from simulators.protocol import AssistantTurn

__all__ = ["JournaledModel", "note_served", "request_hash"]


_NO_SEED = b',"seed":null}'


def request_hash(run_id: str, unit_id: str, model: str, request: ModelRequest) -> str:
    """sha256 of the sorted-key JSON {model, request, run, unit}. A request without a seed (the request's
    last field) hashes without that field, exactly as before seeds existed, so a run journaled then still
    replays its paid answers on resume."""
    body = orjson.dumps(request)
    if request.seed is None and body.endswith(_NO_SEED):
        body = body[: -len(_NO_SEED)] + b"}"
    payload = b'{"model":%b,"request":%b,"run":%b,"unit":%b}' % (
        orjson.dumps(model), body, orjson.dumps(run_id), orjson.dumps(unit_id))
    return hashlib.sha256(payload).hexdigest()


_SERVED: set[tuple[str, str, str]] = set()
"""(run, model, served version) already journaled by this process: a new version costs one meta row,
the calls after it none."""


def note_served(batch: Batch, run_id: str, model: str, served: str) -> None:
    """Add to `batch` the first sight of a version the provider says served `model` (provenance)."""
    mark = (run_id, model, served)
    if served and mark not in _SERVED:
        _SERVED.add(mark)
        batch.set_meta(served_model_meta_key(*mark), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


class JournaledModel:
    def __init__(self, inner: ModelClient, journal: Journal, run_id: str, unit_id: str, stream_id: str,
                 purpose: Purpose = "agent", replayable: Container[str] | None = None,
                 replay_from: str | None = None, route: Callable[[], str] = lambda: "live") -> None:
        """`replayable`: the units that have cached answers (None: any unit may have). A unit outside it
        has never had a call answered, so its calls never read the journal: on a fresh run, all of them.
        A unit inside it reads its answers once, at its first call, and answers the rest from memory.
        `replay_from`: a recorded run whose paid answers to the same unit also answer (an audit's
        replay of that run pays nothing for the turns the recording already paid for). `route`: how the
        call just made was answered ('live', 'batch'), journaled on its row."""
        self._inner = inner
        self._journal = journal
        self._run_id = run_id
        self._unit_id = unit_id
        self._stream_id = stream_id
        self._purpose = purpose
        self._look_up = replayable is None or unit_id in replayable
        self._answers: dict[str, bytes] | None = None
        self._replay_from = replay_from
        self._recorded: dict[str, bytes] | None = None
        self._route = route

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        key = request_hash(self._run_id, self._unit_id, self.name, request)
        cached = await self._cached(key)
        if cached is None and self._replay_from is not None:
            key, cached = await self._recorded_answer(request, key)
        if cached is not None:
            response = decode_answer(cached)
            # Replayed: nothing is paid again; the call is journaled at zero cost for the record.
            await self._journal.enqueue(self._call_row(key, response, 0.0, from_cache=True, cost=0.0))
            return ModelResponse(response.turn, Usage(), 0.0)
        started = time.monotonic()
        keyed = REQUEST_KEY.set(key)  # a batched call's custom id
        try:
            response = await self._inner.respond(request)
        except InfrastructureError as exc:
            # Failed calls are journaled too: their tokens may have been billed, and the report says so.
            failed = ModelResponse(AssistantTurn(), exc.usage, exc.cost_usd, exc.attempts, exc.replica,
                                   retried=exc.retried)
            failure = self._call_row(key, failed, time.monotonic() - started, from_cache=False,
                                     cost=exc.cost_usd, status="failed", error=f"{type(exc).__name__}: {exc}")
            with anyio.CancelScope(shield=True):
                await self._journal.enqueue(failure)
            raise
        finally:
            REQUEST_KEY.reset(keyed)
        batch = self._call_row(key, response, time.monotonic() - started, from_cache=False,
                               cost=response.cost_usd)
        note_served(batch, self._run_id, self.name, response.served_model)
        encoded = encode_answer(response)
        batch.cached_answer(key, self._run_id, self._unit_id, self.name, encoded, time.time())
        if self._answers is not None:
            self._answers[key] = encoded  # as the journal will hold it: asked again, it replays
        # Not awaited: the episode that made this call commits after it (the writer keeps arrival order),
        # so a crash can lose only the record of a call whose episode was still in flight.
        await self._journal.enqueue(batch)
        return response

    def _call_row(self, key: str, response: ModelResponse, latency: float, from_cache: bool, cost: float,
                  status: str = "ok", error: str = "") -> Batch:
        usage = response.usage if not from_cache else Usage()
        attempts = 0 if from_cache else response.attempts
        return Batch().model_call(ModelCallRow(
            self._run_id, self._unit_id, self._stream_id, self._purpose, self.name, key, status, attempts,
            from_cache, usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens,
            usage.output_tokens, cost, latency, time.time(), error, usage.estimated, response.replica,
            usage.cache_write_1h_tokens, "" if from_cache else response.cache_ttl,
            "" if from_cache else ",".join(response.retried), self._route(),
        ))

    async def _recorded_answer(self, request: ModelRequest, own_key: str) -> tuple[str, bytes | None]:
        """The recorded run's paid answer to this request (its key), or (own key, None)."""
        assert self._replay_from is not None
        if self._recorded is None:
            self._recorded = await self._journal.read.cached_answers(self._replay_from, self._unit_id)
        key = request_hash(self._replay_from, self._unit_id, self.name, request)
        found = self._recorded.get(key)
        return (key, found) if found is not None else (own_key, None)

    async def _cached(self, key: str) -> bytes | None:
        """The unit's paid answer to this request, if any: its answers are read from the journal once."""
        if not self._look_up:
            return None
        if self._answers is None:
            self._answers = await self._journal.read.cached_answers(self._run_id, self._unit_id)
        return self._answers.get(key)

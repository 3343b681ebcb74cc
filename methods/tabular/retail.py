"""Retail adapter: which (operation, attribute, value) cells the store currently refuses, and with which code.

The retail schema (simulators/domains/retail/vocabulary.py, whose names, rule reader and fact reading
this adapter uses) refuses an operation when an attribute of the request takes a listed value, so the
table is one cell per (op, attribute, value). A cell holds when its
status was last seen allowed or refused and which refusal codes scored; the block writes, per
(op, attribute) whose learned cells differ from the documents, the full deny list grouped by code.

Evidence from one episode (legs are the customer's alternatives, in order):
- a leg carried out and scoring 100: every cell of that leg is allowed (`ok`), and a single believed
  refusal cell of each earlier leg is confirmed (`dok`);
- leg 1 carried out and scoring 0: some cell of it is refused. The failure is kept with its candidate
  cells; a candidate is exonerated by a later success, and a failure left with one candidate, or with
  one cell whose allowance is under test, pins it (`fail`, strong). A candidate shared by strictly more
  open failures than any other is pinned too (weak: a greedy hitting set);
- a later leg carried out and scoring 0: an earlier leg's refusal without evidence of its own is tried
  as allowed, else the carried leg's failure is kept as above;
- a refusal scoring 100: the cited cell's refusal and code are confirmed; scoring 0: either the cell is
  allowed now or the code is wrong. A strongly pinned cell whose code was never confirmed tries the next
  code once; otherwise the cell tries being allowed (`dfail`), and if that fails, the code is blamed. With
  several legs refused, the cell with the weakest evidence of its own is the suspect;
- a quote answered above 0 and scoring 100 allows every cell; answered 0 and scoring 0, the same.
The most recent evidence decides a cell's status (drift and reversals: a newer contradiction re-opens it).
Nothing is written for a cell the documents already describe correctly.
"""

from __future__ import annotations

from collections.abc import Mapping

from methods.tabular.common import NEVER, calls_of, documented_rules
from methods.tabular.retail_evidence import Cell, DocRule, EpisodeEvidence
from simulators.domains.retail.vocabulary import (
    DEFAULT_CODE,
    Condition,
    parse_policy,
)
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["RetailAdapter"]

HORIZON = 240
"""Stream positions an unexplained failure stays open."""
MAX_PENDING = 40


class RetailAdapter:
    def __init__(self) -> None:
        self.cells: dict[str, Cell] = {}
        self.pending: dict[str, list[tuple[int, list[str]]]] = {}
        self.documented: dict[str, JSON] = {}
        self._doc: dict[tuple[str, str], list[DocRule]] = {}

    # ------------------------------------------------------------------------------------ state

    def state(self) -> JSON:
        return {
            "documented": self.documented,
            "cells": {key: cell.to_json() for key, cell in sorted(self.cells.items())},
            "pending": {op: [[t, list(cells)] for t, cells in failures]
                        for op, failures in sorted(self.pending.items()) if failures},
        }

    def load(self, state: JSON) -> None:
        self.cells = {str(k): Cell.from_json(v) for k, v in state.get("cells", {}).items()}
        self.pending = {str(op): [(int(t), [str(c) for c in cells]) for t, cells in failures]
                        for op, failures in state.get("pending", {}).items()}
        self._set_documented(state.get("documented", {}))

    def _set_documented(self, policy: Mapping[str, JSON]) -> None:
        self.documented = {str(k): v for k, v in sorted(policy.items())}
        self._doc = {}
        for rule in parse_policy(self.documented):
            self._doc.setdefault((rule.op, rule.attribute), []).append(DocRule(rule.rule_id, rule.denied, rule.reason))

    # ------------------------------------------------------------------------------------ beliefs

    def _doc_denied(self, op: str, attribute: str, value: str) -> bool:
        return any(value in rule.deny for rule in self._doc.get((op, attribute), []))

    def _priors(self, op: str, attribute: str, value: str) -> list[str]:
        documented = [rule.reason for rule in self._doc.get((op, attribute), []) if value in rule.deny]
        documented += [rule.reason for rule in self._doc.get((op, attribute), [])]
        return list(dict.fromkeys([*documented, DEFAULT_CODE.get(attribute, "service_not_offered")]))

    def denied(self, key: str) -> bool:
        condition = Condition.from_key(key)
        cell = self.cells.get(key)
        documented = self._doc_denied(condition.op, condition.attribute, condition.value)
        return cell.denied(documented) if cell else documented

    def code(self, key: str) -> str:
        condition = Condition.from_key(key)
        cell = self.cells.get(key)
        priors = self._priors(condition.op, condition.attribute, condition.value)
        if cell is None:
            return priors[0]
        return cell.code(priors)

    def _cell(self, key: str) -> Cell:
        cell = self.cells.get(key)
        if cell is None:
            cell = self.cells[key] = Cell()
        return cell

    # ------------------------------------------------------------------------------------ learning

    def learn(self, record: EpisodeRecord) -> None:
        calls = calls_of(record)
        documented = documented_rules(calls)
        if documented and documented != self.documented:
            self._set_documented(documented)
        episode = EpisodeEvidence.read(record, calls)
        if episode is None:
            return
        t, success = record.position, record.reward >= 0.999
        legs = episode.legs
        denied = [[key for key in keys if self.denied(key)] for _, keys in legs]
        if episode.carried is not None:
            self._learn_carried(t, success, episode.carried, legs, denied)
        elif episode.quote is not None:
            self._learn_quote(t, success, episode.quote, legs[0], denied[0])
        elif episode.refused is not None:
            self._learn_refused(t, success, episode.refused, legs, denied)
        for op in sorted({op for op, _ in legs}):
            self._resolve(op, t)

    def _learn_carried(self, t: int, success: bool, k: int, legs: list[tuple[str, list[str]]],
                       denied: list[list[str]]) -> None:
        op, keys = legs[k]
        if success:
            for key in keys:
                self._ok(key, t)
            for earlier in denied[:k]:
                if len(earlier) == 1:
                    self._cell(earlier[0]).dok = t
            return
        weak = [d[0] for d in denied[:k] if len(d) == 1 and self._strength(d[0]) == NEVER]
        if weak:
            self._refusal_failed(weak[-1], self.code(weak[-1]), t, single=False)
            return
        self.pending.setdefault(op, []).append((t, keys))
        del self.pending[op][:-MAX_PENDING]

    def _learn_quote(self, t: int, success: bool, answer: float, leg: tuple[str, list[str]],
                     denied: list[str]) -> None:
        op, keys = leg
        if answer > 0:
            if success:
                for key in keys:
                    self._ok(key, t)
            else:
                self.pending.setdefault(op, []).append((t, keys))
                del self.pending[op][:-MAX_PENDING]
        elif success:
            if len(denied) == 1:
                self._cell(denied[0]).dok = t
        else:
            for key in keys:
                self._ok(key, t)

    def _learn_refused(self, t: int, success: bool, code: str, legs: list[tuple[str, list[str]]],
                       denied: list[list[str]]) -> None:
        cited = next((key for key in denied[0] if self.code(key) == code), None) if denied else None
        if cited is None:
            return
        if success:
            cell = self._cell(cited)
            cell.dok = cell.code_ok[code] = t
            for later in denied[1:]:
                if len(later) == 1:
                    self._cell(later[0]).dok = t
            return
        suspects = [cited] + [d[0] for d in denied[1:] if len(d) == 1]
        if len(suspects) == 1:
            self._refusal_failed(cited, code, t, single=True)
            return
        # Several legs refused: blame the one with the weakest evidence of its own, the later leg on a tie.
        index = min(range(len(suspects)), key=lambda i: (self._strength(suspects[i]), -i))
        self._refusal_failed(suspects[index], code if index == 0 else self.code(suspects[index]), t, single=False)

    def _strength(self, key: str) -> int:
        """When a refused cell was last refused on evidence of its own; NEVER for the documents or a guess."""
        cell = self.cells.get(key)
        if cell is None or not self.denied(key):
            return NEVER
        allowed = max(cell.ok, cell.dfail)
        if cell.dok > allowed:
            return cell.dok
        return cell.fail if cell.strong and cell.fail > allowed else NEVER

    def _refusal_failed(self, key: str, code: str, t: int, single: bool) -> None:
        """A refusal citing `key` with `code` failed: blame the code of a firmly pinned cell once, else
        try allowing the cell (blaming the code later if that fails too, when it was the only suspect)."""
        cell = self._cell(key)
        deny_event = max(cell.fail, cell.dok)
        pinned = cell.strong and cell.fail >= cell.dok
        confirmed_since = cell.code_ok.get(code, NEVER) >= deny_event
        retried = any(fail_t > deny_event for fail_t in cell.code_fail.values())
        if single and self.denied(key) and deny_event > NEVER and pinned and not confirmed_since and not retried:
            cell.code_fail[code] = t
            return
        cell.dfail, cell.amb = t, code if single else ""

    def _ok(self, key: str, t: int) -> None:
        cell = self._cell(key)
        cell.ok, cell.amb = t, ""

    def _pin(self, key: str, t: int, strong: bool) -> None:
        cell = self._cell(key)
        if cell.amb:
            cell.code_fail[cell.amb] = max(cell.code_fail.get(cell.amb, NEVER), cell.dfail)
            cell.amb = ""
        cell.fail, cell.strong = t, strong

    def _resolve(self, op: str, now: int) -> None:
        """Pin the cause of each open failure of `op`: the one candidate left, else the one candidate whose
        allowance is under test, else (over several failures) a candidate shared by strictly more of them
        than any other."""
        open_failures: list[tuple[int, list[str]]] = []
        for t, keys in self.pending.get(op, []):
            if t < now - HORIZON or any(self.denied(key) for key in keys):
                continue
            candidates = [key for key in keys if self.cells.get(key, Cell()).ok < t]
            testing = [key for key in candidates if self._under_test(key)]
            if len(candidates) == 1 or len(testing) == 1:
                self._pin((testing or candidates)[0], t, strong=True)
            elif candidates:
                open_failures.append((t, candidates))
        while True:
            counts: dict[str, list[int]] = {}
            for t, keys in open_failures:
                if not any(self.denied(key) for key in keys):
                    for key in keys:
                        counts.setdefault(key, []).append(t)
            ranked = sorted(counts, key=lambda key: (-len(counts[key]), self.cells.get(key, Cell()).ok, key))
            if not ranked or len(counts[ranked[0]]) < 2 or (
                    len(ranked) > 1 and len(counts[ranked[1]]) == len(counts[ranked[0]])):
                break
            self._pin(ranked[0], max(counts[ranked[0]]), strong=False)
        self.pending[op] = [(t, keys) for t, keys in open_failures if not any(self.denied(key) for key in keys)]

    def _under_test(self, key: str) -> bool:
        """Allowed only because a refusal citing it failed, and not yet seen allowed since."""
        cell = self.cells.get(key)
        return cell is not None and cell.dfail > max(cell.ok, cell.fail, cell.dok)

    # ------------------------------------------------------------------------------------ rendering

    def rules(self) -> dict[str, JSON]:
        """Rules that differ from the documents, in the retail schema (one block overrides by id)."""
        groups: dict[tuple[str, str], set[str]] = {}
        for key in self.cells:
            condition = Condition.from_key(key)
            groups.setdefault((condition.op, condition.attribute), set()).add(condition.value)
        block: dict[str, JSON] = {}
        for (op, attribute), values in sorted(groups.items()):
            documented = self._doc.get((op, attribute), [])
            values |= {value for rule in documented for value in rule.deny}
            keys = {value: Condition.of(op, attribute, value).key for value in sorted(values)}
            learned = {value: self.code(key) for value, key in keys.items() if self.denied(key)}
            as_documented = {value: rule.reason for rule in reversed(documented) for value in rule.deny}
            if learned == as_documented:
                continue
            by_code: dict[str, list[str]] = {}
            for value, code in learned.items():
                by_code.setdefault(code, []).append(value)
            ids = [rule.rule_id for rule in documented] or [f"{op}.{attribute}"]
            first = documented[0].reason if documented else DEFAULT_CODE.get(attribute, "service_not_offered")
            for rule_id in ids:
                block[rule_id] = {"op": op, "attribute": attribute, "deny": [], "reason": first}
            for index, code in enumerate(sorted(by_code, key=lambda c: (c != first, -len(by_code[c]), c))):
                rule_id = ids[0] if index == 0 else f"{op}.{attribute}.{code}"
                block[rule_id] = {"op": op, "attribute": attribute, "deny": by_code[code], "reason": code}
        return block

    def context(self, task: TaskView) -> dict[str, JSON]:
        return self.rules()

"""Pitch adapter: the current customer's weight for every `<attribute>.<value>`, inferred from scores.

The rubric (FORMAT.md) is known: score = 100 x (liked weight mentioned / liked weight on the sheet)
x 0.5 per disliked value mentioned x 0.3 per red line mentioned. Each serving episode gives the sheet's
values (read off the instruction), the values the pitch mentioned (read off the pitch with the same
lexicon that reads sheets), and the exact score. An observation therefore pins a few "shapes"
(dislikes mentioned, red lines mentioned, liked weight mentioned, liked weight left out), and a
backtracking solver finds one weight in {+2, +1, 0, -1, -3} per value that reproduces every
observation of the current customer, trying the current weights first (a small revision).

- Plausible weights: the weights of a value that, all else equal, still reproduce every observation.
  A value whose plausible weights are all positive is stated, all non-positive is left out, and a
  mixed one (or one never seen with this customer) is stated as a tentative like (weight 0.5, ranked
  below confirmed likes, so the word budget drops it first): that is the exploration, and the score of
  that pitch settles it.
- Drift: when no weights reproduce the newest episode together with the older ones, the customer has
  changed; the longest run of recent episodes one customer explains is kept (back in time from the
  newest), the older ones are dropped, and the retired weights join a library of past customers. A
  library customer who reproduces the kept run is taken whole (L2 recurrence, L3 reversals), so values
  not yet seen again keep that customer's weights.
The block weighs every value of this task's sheet (and every other value known), so that the planner
states exactly the chosen facts, most valued first.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from methods.tabular.common import calls_of, documented_rules
from simulators.domains.pitch.attributes import parse_rule_id, rule_id
from simulators.domains.pitch.lexicon import find_cues
from simulators.domains.pitch.sheet import parse_sheet
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["Observation", "PitchAdapter", "mentioned_values", "predicted_score"]

WEIGHTS: tuple[int, ...] = (2, 1, 0, -1, -3)
TOLERANCE = 0.05
"""Score points: a prediction this close reproduces the observed score."""
MAX_OBSERVATIONS = 90
MAX_LIBRARY = 12
MIN_RETIRED = 4
"""Episodes a fit must have explained to join the library when its customer leaves."""
TENTATIVE = 0.5
SCALE = 10_000
"""Scores are kept as integers: score points x SCALE."""


@dataclass(frozen=True)
class Observation:
    position: int
    sheet: tuple[str, ...]
    said: tuple[str, ...]
    score: int
    """Score points x SCALE."""

    def to_json(self) -> JSON:
        return [self.position, list(self.sheet), list(self.said), self.score]

    @classmethod
    def from_json(cls, raw: JSON) -> Observation:
        position, sheet, said, score = raw
        return cls(int(position), tuple(str(v) for v in sheet), tuple(str(v) for v in said), int(score))


def predicted_score(weights: Mapping[str, int], sheet: Sequence[str], said: Sequence[str]) -> float:
    liked = sum(max(weights.get(v, 0), 0) for v in sheet)
    if liked == 0:
        return 0.0
    stated = sum(max(weights.get(v, 0), 0) for v in said)
    disliked = sum(1 for v in said if -3 < weights.get(v, 0) < 0)
    red = sum(1 for v in said if weights.get(v, 0) <= -3)
    return 100.0 * stated / liked * 0.5 ** disliked * 0.3 ** red


def mentioned_values(pitch: str, sheet: Sequence[str], product_words: Sequence[str]) -> tuple[str, ...]:
    """The sheet values the pitch asserts (and does not deny), as the lexicon reads them."""
    for words in product_words:
        if words:
            pitch = re.sub(rf"(?<!\w){re.escape(words)}(?!\w)", " ", pitch, flags=re.IGNORECASE)
    asserted = {rule_id(hit.attribute, hit.value) for hit in find_cues(pitch) if not hit.negated}
    return tuple(v for v in sheet if v in asserted)


# ---------------------------------------------------------------------------------------------- solving


@dataclass(frozen=True)
class _Constraint:
    """What one observation says about the weights of its sheet's values.

    A zero score says no mentioned value is liked. Any other score factors as coverage x 0.5^dislikes
    x 0.3^red lines; `shapes` lists every (dislikes, red lines, liked weight mentioned, liked weight left
    unmentioned) that reproduces it."""

    said: tuple[str, ...]
    unsaid: tuple[str, ...]
    zero: bool
    shapes: tuple[tuple[int, int, int, int], ...]


@functools.lru_cache(maxsize=8192)
def _constraint(o: Observation) -> _Constraint:
    said = tuple(v for v in o.sheet if v in set(o.said))
    unsaid = tuple(v for v in o.sheet if v not in set(o.said))
    score = o.score / SCALE
    if score <= TOLERANCE:
        return _Constraint(said, unsaid, True, ())
    shapes = []
    m, u = len(said), len(unsaid)
    for dislikes in range(m + 1):
        for red in range(m - dislikes + 1):
            factor = 100.0 * 0.5 ** dislikes * 0.3 ** red
            for stated in range(1, 2 * (m - dislikes - red) + 1):
                liked = stated * factor / score
                rest = int(round(liked)) - stated
                if 0 <= rest <= 2 * u and abs(stated / (stated + rest) * factor - score) <= TOLERANCE:
                    shapes.append((dislikes, red, stated, rest))
    return _Constraint(said, unsaid, False, tuple(shapes))


class _Solver:
    """Backtracking over one weight per value, pruning with every observation's shapes.

    Values are tried closest-first to a preferred assignment (the current weights), so a solution is a
    small revision of what was believed."""

    def __init__(self, constraints: Sequence[_Constraint], limit: int = 2_000) -> None:
        self.constraints = list(constraints)
        self.limit = limit
        self.variables: dict[str, list[tuple[int, bool]]] = {}
        self.banned: set[str] = set()
        for index, c in enumerate(self.constraints):
            for v in c.said:
                self.variables.setdefault(v, []).append((index, True))
                if c.zero:
                    self.banned.add(v)
            for v in c.unsaid:
                self.variables.setdefault(v, []).append((index, False))

    def solve(self, prefer: Mapping[str, int], free: Collection[str] | None = None) -> dict[str, int] | None:
        """An assignment reproducing every observation, or None. With `free`, every other value keeps
        its preferred weight (a quick local repair)."""
        self.fixed = set() if free is None else {v for v in self.variables if v not in free}
        order = sorted(self.variables, key=lambda v: (v not in self.fixed, -len(self.variables[v]), v))
        # per constraint: [stated, unsaid liked, dislikes, red lines, said left, unsaid left]
        self.sums = [[0, 0, 0, 0, len(c.said), len(c.unsaid)] for c in self.constraints]
        self.nodes = 0
        assignment: dict[str, int] = {}
        if not all(self._feasible(i) for i in range(len(self.constraints))):
            return None
        return dict(assignment) if self._search(order, 0, assignment, prefer) else None

    def _feasible(self, i: int) -> bool:
        c = self.constraints[i]
        if c.zero:
            return True
        stated, unsaid_liked, dislikes, red, said_left, unsaid_left = self.sums[i]
        for d, r, a, rest in c.shapes:
            more_d, more_r = d - dislikes, r - red
            if more_d < 0 or more_r < 0 or more_d + more_r > said_left:
                continue
            if stated <= a <= stated + 2 * (said_left - more_d - more_r) and \
                    unsaid_liked <= rest <= unsaid_liked + 2 * unsaid_left:
                return True
        return False

    def _search(self, order: list[str], depth: int, assignment: dict[str, int], prefer: Mapping[str, int]) -> bool:
        if depth == len(order):
            return True
        self.nodes += 1
        if self.nodes > self.limit:
            return False
        value = order[depth]
        first = prefer.get(value, 0)
        options = [first] if value in self.fixed else [first, *(w for w in (0, 1, -1, 2, -3) if w != first)]
        for weight in options:
            if weight > 0 and value in self.banned:
                continue
            self._move(value, weight, +1)
            if all(self._feasible(i) for i, _ in self.variables[value]):
                assignment[value] = weight
                if self._search(order, depth + 1, assignment, prefer):
                    return True
                del assignment[value]
            self._move(value, weight, -1)
            if self.nodes > self.limit:
                return False
        return False

    def _move(self, value: str, weight: int, sign: int) -> None:
        liked = max(weight, 0) * sign
        for i, said in self.variables[value]:
            sums = self.sums[i]
            if said:
                sums[0] += liked
                sums[2] += sign if -3 < weight < 0 else 0
                sums[3] += sign if weight <= -3 else 0
                sums[4] -= sign
            else:
                sums[1] += liked
                sums[5] -= sign


def _solve(observations: Sequence[Observation], prefer: Mapping[str, int],
           free: Collection[str] | None = None) -> dict[str, int] | None:
    """Weights reproducing every observation: first by changing only the `free` values (the newest
    observation's sheet), then, failing that, any of them."""
    solver = _Solver([_constraint(o) for o in observations])
    if free is not None:
        found = solver.solve(prefer, free)
        if found is not None:
            return found
    return solver.solve(prefer)


def _reproduces(weights: Mapping[str, int], o: Observation) -> bool:
    return abs(predicted_score(weights, o.sheet, o.said) - o.score / SCALE) <= TOLERANCE


def plausible_weights(weights: Mapping[str, int], value: str, observations: Sequence[Observation]) -> list[int]:
    """The weights of `value` that, all else equal, still reproduce every observation of its sheet."""
    touched = [o for o in observations if value in o.sheet]
    current = weights.get(value, 0)
    options = []
    for w in WEIGHTS:
        trial = {**weights, value: w}
        if w == current or all(_reproduces(trial, o) for o in touched):
            options.append(w)
    return options


class PitchAdapter:
    def __init__(self) -> None:
        self.observations: list[Observation] = []
        """The current customer's episodes, oldest first."""
        self.weights: dict[str, int] = {}
        self.anchored = False
        """The weights are a past customer's, recognised: values not seen since keep that customer's weight."""
        self.plausible: dict[str, list[int]] = {}
        self.library: list[dict[str, int]] = []
        self.known: list[str] = []
        """Every rule id the documents or a sheet showed: the block weighs them all."""

    def state(self) -> JSON:
        return {
            "observations": [o.to_json() for o in self.observations],
            "weights": dict(sorted(self.weights.items())),
            "anchored": self.anchored,
            "plausible": dict(sorted(self.plausible.items())),
            "library": [dict(sorted(p.items())) for p in self.library],
            "known": list(self.known),
        }

    def load(self, state: JSON) -> None:
        self.observations = [Observation.from_json(o) for o in state.get("observations", [])]
        self.weights = {str(k): int(v) for k, v in state.get("weights", {}).items()}
        self.anchored = bool(state.get("anchored", False))
        self.plausible = {str(k): [int(w) for w in v] for k, v in state.get("plausible", {}).items()}
        self.library = [{str(k): int(v) for k, v in p.items()} for p in state.get("library", [])]
        self.known = [str(v) for v in state.get("known", [])]

    # ------------------------------------------------------------------------------------ learning

    def learn(self, record: EpisodeRecord) -> None:
        calls = calls_of(record)
        known = set(self.known) | {r for r in documented_rules(calls) if parse_rule_id(r) is not None}
        sheet = parse_sheet(record.task.instruction)
        values = tuple(rule_id(item.attribute, item.value) for item in sheet.items)
        pitch = (record.finish_arguments or {}).get("pitch")
        self.known = sorted(known | set(values))
        if not values or not isinstance(pitch, str):
            return
        said = mentioned_values(pitch, values, (sheet.name, sheet.category))
        observation = Observation(record.position, values, said, int(round(record.reward * 100 * SCALE)))
        solution = _solve([*self.observations, observation], self.weights, free=observation.sheet)
        if solution is not None:
            if any(self.weights.get(v, 0) != w for v, w in solution.items()):
                self.anchored = False
            self.observations.append(observation)
            del self.observations[:-MAX_OBSERVATIONS]
        else:
            solution = self._new_regime(observation)
        self.weights = dict(sorted({**self.weights, **solution}.items()))
        seen = {v for o in self.observations for v in o.sheet}
        self.plausible = {
            v: plausible_weights(self.weights, v, self.observations) if v in seen
            else [self.weights.get(v, 0)] if self.anchored else list(WEIGHTS)
            for v in self.known
        }

    def _new_regime(self, newest: Observation) -> dict[str, int]:
        """The customer changed: keep the longest run of recent episodes one customer explains (newest
        first, back in time until one contradicts them), retire the previous weights to the library,
        and recognise a past customer if one explains the run."""
        if len(self.observations) >= MIN_RETIRED and self.weights:
            profile = dict(sorted(self.weights.items()))
            self.library = [p for p in self.library if p != profile] + [profile]
            del self.library[:-MAX_LIBRARY]
        kept = [newest]
        solution = _solve(kept, {}) or {}
        for older in reversed(self.observations):
            trial = _solve([older, *kept], solution, free=older.sheet)
            if trial is None:
                break
            kept, solution = [older, *kept], trial
        self.observations = kept
        self.anchored = False
        for profile in reversed(self.library):
            if all(_reproduces(profile, o) for o in kept):
                self.anchored = True
                return dict(profile)
        return solution

    # ------------------------------------------------------------------------------------ rendering

    def context(self, task: TaskView) -> dict[str, JSON]:
        if not self.observations and not self.library:
            return {}
        sheet = {rule_id(item.attribute, item.value) for item in parse_sheet(task.instruction).items}
        block: dict[str, JSON] = {}
        for value in sorted(set(self.known) | sheet):
            options = self.plausible.get(value, list(WEIGHTS))
            if value in sheet and max(options) > 0 and min(options) <= 0:
                block[value] = TENTATIVE
            else:
                block[value] = self.weights.get(value, 0)
        return block

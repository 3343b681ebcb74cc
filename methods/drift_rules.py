"""drift_rules: rules with an evidence log, for policies that drift and reverse.

One model call per serving episode (a block's calls run concurrently against the rules as they were
before the block; their results are applied in stream order) says which stored rules the episode
bears on, whether its outcome supports or contradicts each, and proposes at most 2 new rules, each
with the alternative that would hold if it were wrong. Evidence may name only rules the model was
shown. A proposal that near-duplicates a stored rule (any status) counts as support for it: that is
how a retired rule comes back when its policy returns.

Every rule keeps the last 16 pieces of evidence (stream position, score, verdict) and a status that
changes only on evidence, by the trailing run of equal verdicts (change detection on the newest
evidence, robust to one noisy episode):
- active  -> suspect after 2 contradictions in a row;
- suspect or active -> retired after 4 contradictions in a row;
- suspect -> active on the next support;
- retired -> active after 2 supports in a row (re-entry of an earlier policy).
Retired rules are kept, never deleted for being wrong; the store holds 60 rules, evicting retired
rules with the oldest evidence first, then the least recently confirmed.

The context shows the active rules with the stream position at which each was last confirmed, newest
first, and the suspect rules with their recent contradictions and an instruction to test the
alternative (or, when none is known, the documented behaviour) rather than rely on them.
Retired rules are not shown to the agent, only to the extraction model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from methods.base import MethodSetup, MethodSpec
from methods.llm_json import as_int, as_text, ask_json, gather, items_of
from methods.text import clip, near_duplicate
from simulators.model_api import ModelClient
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["DRIFT_RULES", "DriftRulesMethod", "Evidence", "Rule", "SYSTEM", "Thresholds", "next_status"]

SYSTEM = (
    "You keep rules about a tool-using agent's environment. Its real policy may differ from its documents, "
    "and it changes over time, sometimes back to an earlier behaviour; scores are the only feedback.\n"
    "Given the rules and one finished episode with its score, list the rules the episode bears on and "
    "whether its outcome supports or contradicts each: a high score after following a rule, or a low "
    "score after breaking it, supports it; a low score after following it, or a high score after "
    "breaking it, contradicts it. Skip rules the episode does not test. Propose a new rule (at most 2) "
    "only for behaviour the episode reveals that no rule states, with the alternative that would hold "
    "if it were wrong (often the documented behaviour).\n"
    'Reply with JSON only: {"evidence": [{"id": "r3", "verdict": "supports" or "contradicts"}], '
    '"new_rules": [{"rule": "...", "alternative": "..."}]}'
)
HEADER = ("## Rules learned from your past episodes\n"
          "Inferred from the scores of YOUR OWN earlier episodes in this environment. The policy can change "
          "and later change back; t is a stream position (this task's is in its instruction).")
SUSPECT_NOTE = ("Recent episodes contradicted these rules: the policy they describe may have changed. Do not "
                "rely on them. Test the alternative instead, or the documented behaviour (read the documents) "
                "when no alternative is given; your score will show which holds now.")
RECORD_CHARS = 60_000
MAX_NEW_RULES = 2
VERDICTS = ("supports", "contradicts")


@dataclass(frozen=True)
class Evidence:
    position: int
    score: int
    verdict: str
    """"supports" or "contradicts"."""


@dataclass(frozen=True)
class Rule:
    id: int
    text: str
    alternative: str
    status: str
    """"active", "suspect" or "retired"."""
    created_at: int
    last_confirmed: int
    evidence: tuple[Evidence, ...] = field(default=())


@dataclass(frozen=True)
class Thresholds:
    suspect_after: int = 2
    retire_after: int = 4
    reenter_after: int = 2
    log: int = 16


def next_status(status: str, evidence: Sequence[Evidence], limits: Thresholds) -> str:
    """The status after the newest piece of evidence, from the trailing run of equal verdicts."""
    if not evidence:
        return status
    latest = evidence[-1].verdict
    run = 0
    for item in reversed(evidence):
        if item.verdict != latest:
            break
        run += 1
    if latest == "contradicts":
        if run >= limits.retire_after:
            return "retired"
        return "suspect" if run >= limits.suspect_after and status == "active" else status
    if status == "retired":
        return "active" if run >= limits.reenter_after else "retired"
    return "active"


class DriftRulesMethod:
    def __init__(self, client: ModelClient, domain: str, cap: int = 60, shown_active: int = 30,
                 shown_suspect: int = 15, limits: Thresholds | None = None) -> None:
        self._client = client
        self._domain = domain
        self.cap, self.shown_active, self.shown_suspect = cap, shown_active, shown_suspect
        self.limits = limits or Thresholds()
        self._rules: list[Rule] = []
        self._next_id = 1

    def context(self, task: TaskView) -> str:
        active = self._shown("active", self.shown_active)
        suspect = self._shown("suspect", self.shown_suspect)
        parts = [HEADER]
        if active:
            parts += ["### Active rules", *(f"- {r.text} (last confirmed at t={r.last_confirmed})" for r in active)]
        if suspect:
            parts += ["### Suspect rules", SUSPECT_NOTE, *(_suspect_line(r) for r in suspect)]
        return "\n".join(parts) if len(parts) > 1 else ""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        prompt_rules = self._rules_text()
        # Evidence may name only rules the model was shown: a rule an earlier episode of this block
        # created could otherwise receive evidence meant for an id the model invented.
        shown = [r.id for r in self._rules]
        replies = await gather(lambda r: self._extract(prompt_rules, r), records)
        for record, reply in zip(records, replies, strict=True):
            if isinstance(reply, dict):
                self._apply(record, reply, shown)
        self._evict()

    def state(self) -> JSON:
        return {"next_id": self._next_id, "rules": [_rule_json(r) for r in self._rules]}

    def load(self, state: JSON) -> None:
        self._next_id = int(state["next_id"])
        self._rules = [_rule_from(r) for r in state["rules"]]

    def rules(self) -> list[Rule]:
        return list(self._rules)

    # ------------------------------------------------------------------------------------- extract

    def _rules_text(self) -> str:
        if not self._rules:
            return "## Rules\n(none yet)"
        lines = [f"r{r.id} [{r.status}] {r.text}" + (f" | alternative: {r.alternative}" if r.alternative else "")
                 for r in self._rules]
        return "\n".join(["## Rules", *lines])

    async def _extract(self, rules_text: str, record: EpisodeRecord) -> JSON | None:
        user = (f"{rules_text}\n\n## Episode at stream position {record.position}, score {record.score}/100\n"
                f"{clip(record.render(), RECORD_CHARS)}")
        return await ask_json(self._client, system=SYSTEM, user=user, domain=self._domain)

    # --------------------------------------------------------------------------------------- merge

    def _apply(self, record: EpisodeRecord, reply: Mapping[str, JSON], shown: Sequence[int]) -> None:
        touched: set[int] = set()
        for item in items_of(reply, "evidence"):
            rule_id, verdict = as_int(item.get("id")), item.get("verdict")
            if rule_id is None or rule_id not in shown or rule_id in touched or verdict not in VERDICTS:
                continue
            touched.add(rule_id)
            self._observe(rule_id, Evidence(record.position, record.score, str(verdict)))
        for item in items_of(reply, "new_rules")[:MAX_NEW_RULES]:
            self._propose(record, as_text(item.get("rule")), as_text(item.get("alternative")), touched)

    def _propose(self, record: EpisodeRecord, text: str, alternative: str, touched: set[int]) -> None:
        if not text:
            return
        support = Evidence(record.position, record.score, "supports")
        same = next((r for r in self._rules if near_duplicate(r.text, text)), None)
        if same is not None:
            if same.id not in touched:
                touched.add(same.id)
                self._observe(same.id, support)
            return
        self._rules.append(Rule(self._next_id, text, alternative, "active", record.position, record.position,
                                (support,)))
        touched.add(self._next_id)
        self._next_id += 1

    def _observe(self, rule_id: int, evidence: Evidence) -> None:
        for i, rule in enumerate(self._rules):
            if rule.id == rule_id:
                log = (*rule.evidence, evidence)[-self.limits.log:]
                confirmed = evidence.position if evidence.verdict == "supports" else rule.last_confirmed
                status = next_status(rule.status, log, self.limits)
                self._rules[i] = replace(rule, evidence=log, status=status, last_confirmed=confirmed)

    def _evict(self) -> None:
        if len(self._rules) <= self.cap:
            return
        # Retired rules with the oldest evidence go first, then the least recently confirmed.
        order = sorted(self._rules, key=lambda r: (r.status != "retired", _last_seen(r), r.last_confirmed, r.id))
        dropped = {r.id for r in order[: len(self._rules) - self.cap]}
        self._rules = [r for r in self._rules if r.id not in dropped]

    def _shown(self, status: str, limit: int) -> list[Rule]:
        chosen = [r for r in self._rules if r.status == status]
        return sorted(chosen, key=lambda r: (-r.last_confirmed, r.id))[:limit]


def _suspect_line(rule: Rule) -> str:
    against = [e.position for e in rule.evidence if e.verdict == "contradicts" and e.position > rule.last_confirmed]
    seen = ", ".join(f"t={p}" for p in against[-3:])
    alternative = rule.alternative or "the documented behaviour"
    return (f"- {rule.text} (last confirmed at t={rule.last_confirmed}; contradicted at {seen}). "
            f"Alternative to test: {alternative}")


def _last_seen(rule: Rule) -> int:
    return rule.evidence[-1].position if rule.evidence else rule.created_at


def _rule_json(rule: Rule) -> JSON:
    return {"id": rule.id, "text": rule.text, "alternative": rule.alternative, "status": rule.status,
            "created_at": rule.created_at, "last_confirmed": rule.last_confirmed,
            "evidence": [[e.position, e.score, e.verdict] for e in rule.evidence]}


def _rule_from(data: JSON) -> Rule:
    evidence = tuple(Evidence(int(p), int(s), str(v)) for p, s, v in data["evidence"])
    return Rule(int(data["id"]), str(data["text"]), str(data["alternative"]), str(data["status"]),
                int(data["created_at"]), int(data["last_confirmed"]), evidence)


def describe_drift_rules(state: JSON) -> str:
    """Every rule by status (active, suspect, retired), with its evidence: supporting and contradicting."""
    rules = [_rule_from(r) for r in state.get("rules", [])]
    lines: list[str] = []
    for status in ("active", "suspect", "retired"):
        mine = [r for r in rules if r.status == status]
        if mine:
            lines.append(f"{status} rules ({len(mine)}):")
            lines += [_described(r) for r in mine]
    return "\n".join(lines)


def _described(rule: Rule) -> str:
    supports = sum(e.verdict == "supports" for e in rule.evidence)
    alternative = f"; else: {rule.alternative}" if rule.alternative else ""
    return (f"- {rule.text}{alternative} (made at t={rule.created_at}, last confirmed at t={rule.last_confirmed}; "
            f"evidence {supports} for, {len(rule.evidence) - supports} against)")


def _build(setup: MethodSetup) -> DriftRulesMethod:
    if setup.client is None:
        raise ValueError("the drift_rules method needs a model client")
    return DriftRulesMethod(setup.client, setup.domain)


DRIFT_RULES = MethodSpec(name="drift_rules", summary="Rules with evidence logs: suspect, retire and re-activate on "
                         "the newest evidence; one model call per episode.", uses_model=True, build=_build,
                         describe=describe_drift_rules)

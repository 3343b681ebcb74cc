"""playbook: an ACE-style evolving playbook of bullets with helpful / harmful counters.

Two model calls per `learn` (per block, whatever its size):
1. the reflector reads the playbook and the block's records and says what went right, what went
   wrong, and which bullets helped or hurt (tags);
2. the curator reads the playbook and that reflection and returns delta edits: add, edit or remove
   bullets (at most 8).
The merge is deterministic and local: tags add to counters (at most once per bullet, tag and
episode of the block), edits apply in the order given, unknown ids and empty texts are skipped, an
add that near-duplicates a bullet is skipped, an edited bullet is a new claim and restarts its
counters. Then pruning: a bullet whose harmful count exceeds its helpful count by 2 or more goes;
over 50 bullets, the lowest (helpful - harmful) go first, then the least recently updated, then the
oldest. A malformed reflection skips the block; a malformed curation keeps the tags only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import orjson

from methods.base import MethodSetup, MethodSpec
from methods.llm_json import as_int, as_text, ask_json, items_of
from methods.text import clip, near_duplicate
from simulators.model_api import ModelClient
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["Bullet", "CURATOR", "PLAYBOOK", "PlaybookMethod", "REFLECTOR"]

REFLECTOR = (
    "You are the reflector for a tool-using agent whose environment's real policy may differ from its "
    "documents and may change over time; scores are the only feedback. Read the agent's playbook and a "
    "block of its finished episodes with their scores. Say briefly what went right and what went wrong, "
    "and tag each playbook bullet that an episode shows helped or hurt (one tag per bullet and episode).\n"
    'Reply with JSON only: {"right": ["..."], "wrong": ["..."], '
    '"tags": [{"id": "b3", "tag": "helpful" or "harmful"}]}'
)
CURATOR = (
    "You are the curator of a tool-using agent's playbook. From the reflection on its latest episodes, "
    "return at most 8 edits: add a specific, actionable bullet the playbook lacks; edit a bullet the "
    "evidence shows is outdated or wrong; remove a bullet that is wrong or redundant. Keep bullets short.\n"
    'Reply with JSON only: {"ops": [{"op": "add", "text": "..."}, {"op": "edit", "id": "b3", "text": "..."}, '
    '{"op": "remove", "id": "b5"}]}. If nothing should change, reply {"ops": []}.'
)
HEADER = ("## Playbook\n"
          "Strategies and rules learned from YOUR OWN earlier episodes in this environment, curated as new "
          "episodes arrive. (+h/-k) counts how often a bullet helped or hurt. The environment may change "
          "over time.")
MAX_OPS = 8
BLOCK_CHARS = 120_000
"""Characters of records per reflector call, shared among the block's records."""
MIN_RECORD_CHARS = 6_000


@dataclass(frozen=True)
class Bullet:
    id: int
    text: str
    helpful: int
    harmful: int
    added_at: int
    updated_at: int

    def line(self) -> str:
        return f"- [b{self.id}] (+{self.helpful}/-{self.harmful}) {self.text}"


class PlaybookMethod:
    def __init__(self, client: ModelClient, domain: str, cap: int = 50, harm_margin: int = 2) -> None:
        self._client = client
        self._domain = domain
        self.cap, self.harm_margin = cap, harm_margin
        self._bullets: list[Bullet] = []
        self._next_id = 1

    def context(self, task: TaskView) -> str:
        return self._render() if self._bullets else ""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        if not records:
            return
        reflection = await ask_json(self._client, system=REFLECTOR, user=self._reflector_input(records),
                                    domain=self._domain)
        if not isinstance(reflection, dict):
            return
        self._tag(items_of(reflection, "tags"), len(records))
        curation = await ask_json(self._client, system=CURATOR, user=self._curator_input(reflection),
                                  domain=self._domain)
        self._apply(items_of(curation, "ops")[:MAX_OPS], records[-1].position)
        self._prune()

    def state(self) -> JSON:
        return {"next_id": self._next_id, "bullets": [asdict(b) for b in self._bullets]}

    def load(self, state: JSON) -> None:
        self._next_id = int(state["next_id"])
        self._bullets = [Bullet(**b) for b in state["bullets"]]

    # -------------------------------------------------------------------------------------- prompts

    def _render(self) -> str:
        return "\n".join([HEADER, *(b.line() for b in self._bullets)])

    def _playbook_text(self) -> str:
        return self._render() if self._bullets else "## Playbook\n(empty)"

    def _reflector_input(self, records: Sequence[EpisodeRecord]) -> str:
        limit = max(MIN_RECORD_CHARS, BLOCK_CHARS // len(records))
        episodes = [f"### Episode at stream position {r.position}, score {r.score}/100\n{clip(r.render(), limit)}"
                    for r in records]
        return "\n\n".join([self._playbook_text(), "## Episodes", *episodes])

    def _curator_input(self, reflection: Mapping[str, JSON]) -> str:
        shown = {key: reflection.get(key, []) for key in ("right", "wrong", "tags")}
        body = orjson.dumps(shown, option=orjson.OPT_INDENT_2).decode()
        return f"{self._playbook_text()}\n\n## Reflection\n{body}"

    # ---------------------------------------------------------------------------------------- merge

    def _tag(self, tags: Sequence[Mapping[str, JSON]], episodes: int) -> None:
        counts: dict[tuple[int, str], int] = {}
        for tag in tags:
            bullet_id, kind = as_int(tag.get("id")), tag.get("tag")
            if bullet_id is not None and kind in ("helpful", "harmful"):
                key = (bullet_id, str(kind))
                counts[key] = min(episodes, counts.get(key, 0) + 1)
        self._bullets = [replace(b, helpful=b.helpful + counts.get((b.id, "helpful"), 0),
                                 harmful=b.harmful + counts.get((b.id, "harmful"), 0)) for b in self._bullets]

    def _apply(self, ops: Sequence[Mapping[str, JSON]], position: int) -> None:
        for op in ops:
            kind, bullet_id, text = op.get("op"), as_int(op.get("id")), as_text(op.get("text"))
            if kind == "add" and text and not any(near_duplicate(b.text, text) for b in self._bullets):
                self._bullets.append(Bullet(self._next_id, text, 0, 0, position, position))
                self._next_id += 1
            elif kind == "edit" and text:
                self._bullets = [Bullet(b.id, text, 0, 0, b.added_at, position) if b.id == bullet_id else b
                                 for b in self._bullets]
            elif kind == "remove":
                self._bullets = [b for b in self._bullets if b.id != bullet_id]

    def _prune(self) -> None:
        kept = [b for b in self._bullets if b.harmful - b.helpful < self.harm_margin]
        if len(kept) > self.cap:
            worst_first = sorted(kept, key=lambda b: (b.helpful - b.harmful, b.updated_at, b.id))
            dropped = {b.id for b in worst_first[: len(kept) - self.cap]}
            kept = [b for b in kept if b.id not in dropped]
        self._bullets = kept


def describe_playbook(state: JSON) -> str:
    """The playbook as the agent reads it: every bullet with its helpful / harmful counters."""
    bullets = [Bullet(**b) for b in state.get("bullets", [])]
    return "\n".join([HEADER, *(b.line() for b in bullets)]) if bullets else ""


def _build(setup: MethodSetup) -> PlaybookMethod:
    if setup.client is None:
        raise ValueError("the playbook method needs a model client")
    return PlaybookMethod(setup.client, setup.domain)


PLAYBOOK = MethodSpec(name="playbook", summary="ACE-style playbook: reflector + curator calls per block, "
                      "delta edits with helpful/harmful counters.", uses_model=True, build=_build,
                      describe=describe_playbook)

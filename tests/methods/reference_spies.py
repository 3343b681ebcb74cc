"""Classes of the reference's Method interface shape that keep everything they are handed (for tests).

Each instance built appends itself to its class's `made`, and every context asked goes to the class's
`asked` with the asking instance's id, so a test reads what the adapter gave every instance: the live
one, the deep copies of test sets (which no constructor makes), a resume's rebuilt one.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

_DECISION = re.compile(r'"decision": "(yes|no)"')


class Counting:
    """Learns the last decision that scored, as the toy domain's counting method does."""

    learns = True
    block_size = 2
    made: ClassVar[list[Counting]] = []
    asked: ClassVar[list[tuple[int, Any, str, int, int]]] = []

    def __init__(self, prefer: str = "yes") -> None:
        self.best = prefer
        self.seen = 0
        self.bundles: list[dict[str, Any]] = []
        self.updates: list[list[Any]] = []
        type(self).made.append(self)

    def setup(self, bundle: dict[str, Any]) -> None:
        self.bundles.append(bundle)

    def context(self, task: Any, phase: str, window: int) -> str:
        type(self).asked.append((id(self), task, phase, window, self.seen))
        return f"seen={self.seen} best={self.best}"

    def update(self, results: list[Any]) -> None:
        self.updates.append(list(results))
        for result in results:
            self.seen += 1
            decided = _DECISION.search(result.record)
            if decided is not None:
                said = decided.group(1)
                self.best = said if result.reward == 1.0 else ("no" if said == "yes" else "yes")


class Watching(Counting):
    """Never learns: its serving stream is skipped."""

    learns = False
    made: ClassVar[list[Counting]] = []
    asked: ClassVar[list[tuple[int, Any, str, int, int]]] = []


class Asking(Counting):
    """Asks the model once per update through `bundle["llm"]`, and learns the answer's decision."""

    uses_model = True
    made: ClassVar[list[Counting]] = []
    asked: ClassVar[list[tuple[int, Any, str, int, int]]] = []

    def update(self, results: list[Any]) -> None:
        super().update(results)
        reply = self.bundles[0]["llm"].complete([{"role": "system", "content": "Summarize."},
                                                 {"role": "user", "content": results[-1].record}])
        self.best = "no" if "no" in reply.content else self.best

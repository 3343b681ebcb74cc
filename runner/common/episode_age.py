"""The start order of the episode a piece of work belongs to, carried by its task's context.

Under a cap, the oldest episode's calls go first, at the budget (`runner.cost.budget`) and at the call
slots (`runner.providers.priority`): episodes then finish in the order they started instead of all
advancing a turn at a time, so a run stopped by its cap leaves few half-done episodes behind.
"""

from __future__ import annotations

import contextvars

__all__ = ["EPISODE_AGE"]

EPISODE_AGE: contextvars.ContextVar[int] = contextvars.ContextVar("episode_age", default=0)
"""1 for the run's first episode, counting up; 0 for work of no episode (a method's learn, a probe):
it goes first."""

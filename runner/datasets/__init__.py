"""Datasets as commands: `data replay` and `data check --gold` (`commands`), and `data fetch` of the
official export at its pinned commit (`official`). The format itself is `simulators.dataset`'s.

Arrows: none (it builds on `simulators` only).
"""

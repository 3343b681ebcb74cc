"""Datasets from outside: `data fetch` of the official export at its pinned commit (`official`); the
commands that replay and check a dataset are `runner.cli`'s. The format itself is `simulators.dataset`'s.

Arrows: none (it builds on `simulators` only).
"""

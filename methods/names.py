"""The names of shiftbench's own methods, for a command line's help to list without importing the
methods (they load the simulators' domains, a tenth of a second or more). `methods.registry` holds the
methods themselves; a test holds the two equal."""

from __future__ import annotations

__all__ = ["REGISTERED_METHODS"]

REGISTERED_METHODS = ("blind", "drift_rules", "icl_full", "lessons", "oracle", "playbook", "rag", "rag_recency",
                      "tabular")
"""Sorted, as `sorted(METHOD_REGISTRY)`."""

"""Learning methods, registered by name. Explicit on purpose: a new method is one line here."""

from __future__ import annotations

from methods.base import MethodSpec
from methods.blind import BLIND
from methods.drift_rules import DRIFT_RULES
from methods.icl_full import ICL_FULL
from methods.lessons import LESSONS
from methods.oracle import ORACLE
from methods.playbook import PLAYBOOK
from methods.rag import RAG, RAG_RECENCY
from methods.tabular import TABULAR

__all__ = ["METHOD_REGISTRY", "get_method_spec"]

METHOD_REGISTRY: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (BLIND, ORACLE, ICL_FULL, RAG, RAG_RECENCY, LESSONS, PLAYBOOK, DRIFT_RULES, TABULAR)
}


def get_method_spec(name: str) -> MethodSpec:
    try:
        return METHOD_REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown method '{name}'; known: {', '.join(sorted(METHOD_REGISTRY))}") from None

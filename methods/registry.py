"""Learning methods, registered by name. Explicit on purpose: a new method is one line here."""

from __future__ import annotations

from methods.base import MethodSpec
from methods.blind import BLIND
from methods.oracle import ORACLE

__all__ = ["METHOD_REGISTRY", "get_method_spec"]

METHOD_REGISTRY: dict[str, MethodSpec] = {spec.name: spec for spec in (BLIND, ORACLE)}


def get_method_spec(name: str) -> MethodSpec:
    try:
        return METHOD_REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown method '{name}'; known: {', '.join(sorted(METHOD_REGISTRY))}") from None

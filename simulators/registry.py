"""The domains, registered by name. Explicit on purpose: no discovery magic."""

from __future__ import annotations

from simulators.domain import Domain
from simulators.domains.banking import DOMAIN as BANKING
from simulators.domains.pitch import DOMAIN as PITCH
from simulators.domains.retail import DOMAIN as RETAIL

__all__ = ["DOMAIN_REGISTRY", "get_domain"]

DOMAIN_REGISTRY: dict[str, Domain] = {"retail": RETAIL, "banking": BANKING, "pitch": PITCH}


def get_domain(name: str) -> Domain:
    try:
        return DOMAIN_REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown domain '{name}'; known: {sorted(DOMAIN_REGISTRY)}") from None

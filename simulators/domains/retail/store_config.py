"""The store configuration of the public export's retail scenarios: what the reference's tools enforce.

The reference (ServeLearnBench, `servelearnbench/domains/retail/policy_config.py`) describes its store
as a stage table: S0 card payments, cancellation and modification only; S1 gift cards; S3 returns with
a restocking fee per membership tier, a return window per category, refund destinations per tier and
final-sale clearance items; S4 exchanges and a cancellation cap per tier. Every official scenario runs
its whole stream on S4 with a few flags that make a tool mechanically permissive on a dimension the
hidden rules decide (`l1|l2|l3/timeline.py`, `mechanical_config`): the tool carries the request out
and the grade tells right from wrong. The configuration is therefore one per scenario, constant over
its windows; what drifts between windows is only the hidden rule book the grader's gold follows.

    scenario    permissive flags on top of S4 (+ original-method refunds for every tier,
                price differences payable with any method on file)
    retail_l1   clearance returnable, return window not enforced
    retail_l2   proportional split refunds, modifications recorded on the order
    retail_l3   as L2, and clearance returnable

Thresholds, fees, windows and reason lists are the reference's facts; this module is our own code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from simulators.domains.retail.vocabulary import TIERS

__all__ = ["StoreConfig", "reference_config", "stage_config"]


@dataclass(frozen=True)
class StoreConfig:
    """What the write tools check. A `None` table means the stage has no such rule."""

    cancel_reasons: tuple[str, ...] = ("no longer needed", "ordered by mistake")
    cancel_max_total: Mapping[str, float] | None = None
    """Membership tier -> the largest order total (net of refunds) that may be cancelled."""
    return_reasons: tuple[str, ...] = ()
    return_fee: Mapping[str, float] = field(default_factory=dict)
    """Membership tier -> the restocking fraction withheld from a return refund."""
    return_window_days: Mapping[str, int] = field(default_factory=dict)
    """Product category -> days after delivery a return or exchange is accepted."""
    refund_original_tiers: tuple[str, ...] = ()
    """Tiers whose refunds may go to the order's original payment method (a gift card always may)."""
    gift_cards: bool = False
    modify_offered: bool = True
    returns_offered: bool = False
    exchanges_offered: bool = False
    exchange_any_method: bool = False
    """An exchange's upcharge may be paid with any method on file, not only the original one or a gift card."""
    clearance_returnable: bool = False
    """The return tool accepts clearance (final-sale) items."""
    window_returnable: bool = False
    """The return tool does not enforce the category window."""
    split_refund_proportional: bool = False
    """A refund to a card of an order paid with several methods is split in proportion to what each paid."""
    record_modifications: bool = False
    """Item modifications are appended to the order's `modification_history`."""


def stage_config(stage: int) -> StoreConfig:
    """The reference's stage table (S0 ... S4)."""
    config = StoreConfig(gift_cards=stage >= 1)
    if stage >= 3:
        config = replace(
            config, returns_offered=True, return_reasons=("defective", "no longer needed", "wrong item"),
            return_fee={"bronze": 0.15, "silver": 0.10, "gold": 0.05},
            return_window_days={"apparel": 30, "electronics": 14, "home": 30},
            refund_original_tiers=("gold",),
        )
    if stage >= 4:
        config = replace(config, exchanges_offered=True,
                         cancel_max_total={"bronze": 200.0, "silver": 300.0, "gold": 500.0})
    return config


_MECHANICAL = replace(stage_config(4), refund_original_tiers=TIERS, exchange_any_method=True)
"""S4 as every official scenario's tools run it: original-method refunds open to every tier, an
upcharge payable with any method on file (the documents say so; whether a refund or payment is right
is for the hidden rules)."""

_SCENARIOS: dict[str, StoreConfig] = {
    "retail_l1": replace(_MECHANICAL, clearance_returnable=True, window_returnable=True),
    "retail_l2": replace(_MECHANICAL, split_refund_proportional=True, record_modifications=True),
    "retail_l3": replace(_MECHANICAL, split_refund_proportional=True, record_modifications=True,
                         clearance_returnable=True),
}


def reference_config(scenario: str) -> StoreConfig | None:
    """The configuration an official retail scenario's tools run with; None for an unknown scenario."""
    return _SCENARIOS.get(scenario)

"""The hidden policy of each banking tier: what the documents say and what is in force, by window.

Numbers are the latent state. The documents are stale in both directions: they print limits that
are too strict and too loose, say that some checks do not exist (corridor, daily cap, caps for new
accounts, gift-card verification), and over-apply others (every new payee reviewed, every watchlist
payee denied). Tiers:

- L1 (4 windows): single requests; one boundary is born or moves at each window.
- L2 (5 windows): adds ranked alternatives and batches; boundaries are revised and composed
  (several rules per case, precedence matters).
- L3 (6 windows): L2 plus reversals: earlier states return, a rule is removed, values go back to
  the documented ones (those tasks are `reopen`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domains.banking.rules import effective_rule
from simulators.protocol import JSON

__all__ = ["TIERS", "Tier", "active_policy", "changed_rules", "rule_history"]


def _rule(applies_to: str, order: int, action: str, reason: str, **when: JSON) -> dict[str, JSON]:
    return {"applies_to": applies_to, "order": order, "when": dict(when), "action": action, "reason": reason}


def corridor(categories: list[str]) -> dict[str, JSON]:
    return _rule("card_transaction", 10, "deny", "corridor_blocked", region_in=["overseas"], category_in=categories)


def gift_card_check(over: float) -> dict[str, JSON]:
    return _rule("card_transaction", 20, "deny", "verification_required",
                 category_in=["gift_cards"], verification_in=["basic"], amount_over=over)


def daily_cap(over: float) -> dict[str, JSON]:
    return _rule("card_transaction", 30, "escalate", "daily_cap", today_total_plus_amount_over=over)


def category_limit(category: str, order: int, over: float) -> dict[str, JSON]:
    return _rule("card_transaction", order, "escalate", "over_limit", category_in=[category], amount_over=over)


STANDING = _rule("limit_increase", 10, "deny", "account_standing", standing_in=["recent_chargeback"])


def new_account_cap(over: float) -> dict[str, JSON]:
    return _rule("limit_increase", 20, "deny", "cap_exceeded", tenure_years_under=2, amount_over=over)


def limit_cap(over: float) -> dict[str, JSON]:
    return _rule("limit_increase", 30, "deny", "cap_exceeded", amount_over=over)


def watchlist(over: float) -> dict[str, JSON]:
    return _rule("outbound_transfer", 10, "deny", "restricted_payee", payee_flag_in=["watchlist"], amount_over=over)


def new_payee(over: float) -> dict[str, JSON]:
    return _rule("outbound_transfer", 20, "escalate", "new_payee_review", payee_added_days_under=30, amount_over=over)


def reporting(over: float) -> dict[str, JSON]:
    return _rule("outbound_transfer", 30, "escalate", "reportable_amount", amount_over=over)


def off(rule: Mapping[str, JSON]) -> dict[str, JSON]:
    """A rule that is not in force (kept in a block so it overrides the documented one)."""
    return {**rule, "enabled": False}


ELECTRONICS, TRAVEL = "txn_limit_electronics", "txn_limit_travel"


@dataclass(frozen=True)
class Tier:
    level: int
    serving_per_window: int
    test_per_window: tuple[int, ...]
    multi_part: bool
    """Ranked alternatives and payment batches (L2 and L3)."""
    documented: Mapping[str, Mapping[str, JSON]]
    initial: Mapping[str, Mapping[str, JSON]]
    events: tuple[tuple[int, str, Mapping[str, JSON]], ...]
    """(window, rule id, rule in force from that window on)."""

    @property
    def windows(self) -> int:
        return len(self.test_per_window)


_L1 = Tier(
    level=1, serving_per_window=84, test_per_window=(44, 45, 44, 45), multi_part=False,
    documented={
        ELECTRONICS: category_limit("electronics", 40, 500.0),
        TRAVEL: category_limit("travel", 41, 1200.0),
        "limit_standing": STANDING,
        "limit_cap": limit_cap(5000.0),
        "transfer_watchlist": watchlist(0.0),
        "transfer_reporting": reporting(8000.0),
    },
    initial={
        "txn_gift_card_verification": gift_card_check(250.0),
        ELECTRONICS: category_limit("electronics", 40, 650.0),
        TRAVEL: category_limit("travel", 41, 1200.0),
        "limit_standing": STANDING,
        "limit_new_account_cap": off(new_account_cap(3000.0)),
        "limit_cap": limit_cap(5000.0),
        "transfer_watchlist": watchlist(2000.0),
        "transfer_reporting": reporting(8000.0),
    },
    events=(
        (1, "limit_new_account_cap", new_account_cap(3000.0)),
        (2, TRAVEL, category_limit("travel", 41, 900.0)),
        (3, ELECTRONICS, category_limit("electronics", 40, 450.0)),
        (3, "transfer_reporting", reporting(6000.0)),
    ),
)

_L2_DOCUMENTED: dict[str, Mapping[str, JSON]] = {
    ELECTRONICS: category_limit("electronics", 40, 500.0),
    TRAVEL: category_limit("travel", 41, 1200.0),
    "limit_standing": STANDING,
    "limit_cap": limit_cap(4500.0),
    "transfer_new_payee": new_payee(0.0),
    "transfer_reporting": reporting(9000.0),
}

_L2_INITIAL: dict[str, Mapping[str, JSON]] = {
    "txn_corridor": corridor(["jewelry"]),
    "txn_daily_cap": daily_cap(2500.0),
    ELECTRONICS: category_limit("electronics", 40, 700.0),
    TRAVEL: category_limit("travel", 41, 1000.0),
    "limit_standing": STANDING,
    "limit_new_account_cap": new_account_cap(2500.0),
    "limit_cap": limit_cap(4500.0),
    "transfer_new_payee": new_payee(5000.0),
    "transfer_reporting": reporting(9000.0),
}

_L2 = Tier(
    level=2, serving_per_window=100, test_per_window=(77, 78, 77, 78, 77), multi_part=True,
    documented=_L2_DOCUMENTED, initial=_L2_INITIAL,
    events=(
        (1, ELECTRONICS, category_limit("electronics", 40, 450.0)),
        (1, "limit_new_account_cap", new_account_cap(3200.0)),
        (2, "txn_corridor", corridor(["electronics"])),
        (2, "transfer_new_payee", new_payee(7000.0)),
        (3, TRAVEL, category_limit("travel", 41, 1400.0)),
        (3, "txn_daily_cap", daily_cap(2000.0)),
        (4, "limit_cap", limit_cap(4000.0)),
    ),
)

_L3 = Tier(
    level=3, serving_per_window=100, test_per_window=(92, 92, 92, 92, 92, 91), multi_part=True,
    documented=_L2_DOCUMENTED, initial=_L2_INITIAL,
    events=(
        (1, ELECTRONICS, category_limit("electronics", 40, 450.0)),
        (1, "limit_cap", limit_cap(4000.0)),
        (2, "txn_corridor", corridor(["electronics"])),
        (2, "transfer_new_payee", new_payee(7000.0)),
        (3, ELECTRONICS, category_limit("electronics", 40, 700.0)),
        (3, "limit_cap", limit_cap(4500.0)),
        (3, TRAVEL, category_limit("travel", 41, 1400.0)),
        (4, "txn_corridor", corridor(["jewelry"])),
        (4, "txn_daily_cap", daily_cap(2000.0)),
        (4, "transfer_new_payee", new_payee(5000.0)),
        (5, "txn_corridor", off(corridor(["jewelry"]))),
        (5, TRAVEL, category_limit("travel", 41, 1000.0)),
        (5, ELECTRONICS, category_limit("electronics", 40, 500.0)),
    ),
)

TIERS: dict[int, Tier] = {1: _L1, 2: _L2, 3: _L3}


def active_policy(tier: Tier, window: int) -> dict[str, JSON]:
    """The complete policy in force in a window: every rule id the tier knows, documented ones that
    are not in force included as disabled, so the block overrides the documents rule by rule."""
    policy: dict[str, JSON] = {rule_id: off(rule) for rule_id, rule in tier.documented.items()}
    policy.update({rule_id: dict(rule) for rule_id, rule in tier.initial.items()})
    for start, rule_id, rule in tier.events:
        if start <= window:
            policy[rule_id] = dict(rule)
    return policy


def changed_rules(tier: Tier, window: int) -> frozenset[str]:
    """Rules whose behaviour changes at the start of a window."""
    if window == 0:
        return frozenset()
    before, now = active_policy(tier, window - 1), active_policy(tier, window)
    return frozenset(r for r in now if effective_rule(before, r) != effective_rule(now, r))


def rule_history(tier: Tier, rule_id: str, window: int) -> tuple[bool, bool]:
    """(differs from the documents now, differed in an earlier window)."""
    documented = effective_rule(tier.documented, rule_id)
    differs = [effective_rule(active_policy(tier, w), rule_id) != documented for w in range(window + 1)]
    return differs[-1], any(differs[:-1])

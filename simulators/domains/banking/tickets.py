"""Ticket families: each builds one case (and its fresh account) around the boundaries of the rules
it is about, so a window's tickets pin those boundaries from both sides.

Amounts are drawn near the thresholds of the family's rules as they stand in the active policy AND
in the documents, so some land where the two disagree (hidden tasks) and some where they agree.
Builders never decide anything: the verdict comes from the rules engine afterwards.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from simulators.domains.banking.entities import Ids, Population, make_account
from simulators.domains.banking.timeline import ELECTRONICS, TRAVEL
from simulators.protocol import JSON

__all__ = ["FAMILIES", "Draft", "Family", "TicketContext"]


@dataclass(frozen=True)
class TicketContext:
    rng: random.Random
    ids: Ids
    population: Population
    policies: tuple[Mapping[str, JSON], ...]
    """The active and the documented policy: where the family's thresholds are read from."""

    def anchors(self, rule_ids: Sequence[str], condition: str = "amount_over") -> list[float]:
        found = set()
        for policy in self.policies:
            for rule_id in rule_ids:
                rule = policy.get(rule_id)
                value = rule.get("when", {}).get(condition) if isinstance(rule, dict) else None
                if isinstance(value, int | float) and value > 0:
                    found.add(float(value))
        return sorted(found)

    def near(self, rule_ids: Sequence[str], low: float, high: float, spread: float = 0.25) -> float:
        """An amount near one of the rules' thresholds, or anywhere in [low, high] without one."""
        anchors = self.anchors(rule_ids)
        if not anchors or self.rng.random() < 0.15:
            return round(self.rng.uniform(low, high), 2)
        anchor = self.rng.choice(anchors)
        return round(anchor * self.rng.uniform(1 - spread, 1 + spread), 2)

    def merchant(self, category: str, region: str) -> str:
        return self.rng.choice(self.population.merchant_ids(category, region))

    def payee(self, recent: bool | None = None, watchlist: bool | None = False) -> str:
        return self.rng.choice(self.population.payee_ids(recent, watchlist))


@dataclass(frozen=True)
class Draft:
    case: dict[str, JSON]
    account: dict[str, JSON]


@dataclass(frozen=True)
class Family:
    name: str
    kind: str
    """`txn`, `limit` or `transfer`: which table the case goes to."""
    focus: tuple[str, ...]
    """The rules this family is about (for `reopen` labels and for boosting a rule's new window)."""
    build: Callable[[TicketContext], Draft]


def _case(ctx: TicketContext, prefix: str, kind: str, account: dict[str, JSON], **fields: JSON) -> dict[str, JSON]:
    return {"case_id": ctx.ids.new(prefix, 6), "kind": kind, "account_id": account["account_id"], **fields}


def _txn(ctx: TicketContext, merchant_id: str, account: dict[str, JSON], **fields: JSON) -> Draft:
    case = _case(ctx, "TXN", "card_transaction", account, merchant_id=merchant_id, **fields,
                 same_day_approved_total=account["today_total"], status="pending", reason=None)
    return Draft(case, account)


def _region(ctx: TicketContext, overseas: float) -> str:
    return "overseas" if ctx.rng.random() < overseas else "domestic"


def _descending(ctx: TicketContext, first: float, low: float = 0.8, high: float = 0.93) -> list[float]:
    """Three amounts, each a little below the one before (the customer's fallbacks)."""
    amounts = [first]
    for _ in range(2):
        amounts.append(round(amounts[-1] * ctx.rng.uniform(low, high), 2))
    return amounts


# ------------------------------------------------------------------------------ card transactions

def txn_limit(category: str, rule_id: str, low: float, high: float) -> Callable[[TicketContext], Draft]:
    def build(ctx: TicketContext) -> Draft:
        account = make_account(ctx.rng, ctx.ids)
        amount = ctx.near([rule_id], low, high)
        return _txn(ctx, ctx.merchant(category, _region(ctx, 0.15)), account, amount=amount)
    return build


def txn_corridor(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    category = ctx.rng.choice(("jewelry", "jewelry", "electronics", "electronics", "travel", "dining"))
    amount = round(ctx.rng.uniform(40, 440), 2)
    return _txn(ctx, ctx.merchant(category, _region(ctx, 0.7)), account, amount=amount)


def txn_gift_card(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids, verification=ctx.rng.choice(("basic", "basic", "verified")))
    amount = ctx.near(["txn_gift_card_verification"], 20, 600, spread=0.5)
    return _txn(ctx, ctx.merchant("gift_cards", _region(ctx, 0.3)), account, amount=amount)


def txn_daily(ctx: TicketContext) -> Draft:
    amount = round(ctx.rng.uniform(60, 900), 2)
    anchors = ctx.anchors(["txn_daily_cap"], "today_total_plus_amount_over") or [2000.0]
    today = max(0.0, float(round((ctx.rng.choice(anchors) - amount + ctx.rng.uniform(-450, 450)) / 10) * 10))
    account = make_account(ctx.rng, ctx.ids, today_total=today)
    category = ctx.rng.choice(("groceries", "dining", "utilities", "fitness", "gift_cards", "jewelry"))
    return _txn(ctx, ctx.merchant(category, _region(ctx, 0.2)), account, amount=amount)


def txn_plain(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    category = ctx.rng.choice(("groceries", "dining", "utilities", "fitness"))
    return _txn(ctx, ctx.merchant(category, _region(ctx, 0.4)), account, amount=round(ctx.rng.uniform(8, 700), 2))


def txn_legs(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    category = ctx.rng.choice(("electronics", "electronics", "travel", "travel", "jewelry"))
    rule = {"electronics": ELECTRONICS, "travel": TRAVEL}.get(category, ELECTRONICS)
    first = ctx.near([rule], 300, 1500, spread=0.15) * ctx.rng.uniform(1.0, 1.2)
    legs: list[JSON] = [{"leg": n, "amount": a} for n, a in enumerate(_descending(ctx, round(first, 2)), start=1)]
    return _txn(ctx, ctx.merchant(category, _region(ctx, 0.3)), account, legs=legs)


# ------------------------------------------------------------------------------ limit increases

def _limit(ctx: TicketContext, account: dict[str, JSON], **fields: JSON) -> Draft:
    case = _case(ctx, "LIM", "limit_increase", account, current_limit=account["credit_limit"], **fields,
                 status="pending", reason=None)
    return Draft(case, account)


def _limit_account(ctx: TicketContext, below: float, **fixed: JSON) -> dict[str, JSON]:
    limit = 100 * ctx.rng.randint(15, max(16, int(below * 0.8) // 100))
    return make_account(ctx.rng, ctx.ids, credit_limit=limit, **fixed)


def limit_standing(ctx: TicketContext) -> Draft:
    standing = ctx.rng.choice(("recent_chargeback", "good"))
    account = _limit_account(ctx, 2400, standing=standing, tenure_years=ctx.rng.randint(2, 9))
    requested = round(float(account["credit_limit"]) + ctx.rng.uniform(150, 600), 2)
    return _limit(ctx, account, requested_limit=requested)


def limit_cap(ctx: TicketContext) -> Draft:
    account = _limit_account(ctx, 3500, tenure_years=ctx.rng.randint(2, 9))
    return _limit(ctx, account, requested_limit=ctx.near(["limit_cap"], 3000, 5500, spread=0.15))


def limit_new_account(ctx: TicketContext) -> Draft:
    tenure = ctx.rng.choice((0, 1, 1, 2, 3))
    account = _limit_account(ctx, 2200, tenure_years=tenure)
    return _limit(ctx, account, requested_limit=ctx.near(["limit_new_account_cap"], 2300, 3600, spread=0.2))


def limit_legs(ctx: TicketContext) -> Draft:
    standing = "recent_chargeback" if ctx.rng.random() < 0.15 else "good"
    account = _limit_account(ctx, 1900, standing=standing, tenure_years=ctx.rng.choice((0, 1, 3, 5, 8)))
    first = ctx.near(["limit_cap", "limit_new_account_cap"], 2500, 5500, spread=0.1) * ctx.rng.uniform(1.0, 1.25)
    steps = _descending(ctx, round(first, 2), 0.88, 0.95)
    return _limit(ctx, account, legs=[{"leg": n, "requested": a} for n, a in enumerate(steps, start=1)])


# ------------------------------------------------------------------------------ transfers

def _transfer(ctx: TicketContext, account: dict[str, JSON], kind: str = "outbound_transfer",
              **fields: JSON) -> Draft:
    extra: dict[str, JSON] = {"reason": None} if kind == "outbound_transfer" else {}
    case = _case(ctx, "TRF", kind, account, **fields, status="pending", **extra)
    return Draft(case, account)


def _part(ctx: TicketContext, payee_id: str, amount: float) -> dict[str, JSON]:
    return {"payee_id": payee_id,
            "payee_added_days_ago": ctx.population.payees[payee_id]["added_days_ago"], "amount": amount}


def transfer_reporting(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    amount = ctx.near(["transfer_reporting"], 1500, 9800, spread=0.2)
    return _transfer(ctx, account, payee_id=ctx.payee(recent=False), amount=amount)


def transfer_new_payee(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    recent = ctx.rng.random() < 0.8
    amount = ctx.near(["transfer_new_payee"], 800, 9600, spread=0.3)
    return _transfer(ctx, account, payee_id=ctx.payee(recent=recent), amount=amount)


def transfer_watchlist(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    flagged = ctx.rng.random() < 0.65
    amount = ctx.near(["transfer_watchlist"], 200, 4000, spread=0.6)
    return _transfer(ctx, account, payee_id=ctx.payee(recent=False, watchlist=flagged), amount=amount)


def transfer_legs(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    payees = ctx.rng.sample(ctx.population.payee_ids(None, False), 3)
    amounts = _descending(ctx, ctx.near(["transfer_new_payee", "transfer_reporting"], 4000, 9800, spread=0.2))
    pairs = zip(payees, amounts, strict=True)
    legs: list[JSON] = [{"leg": n, **_part(ctx, p, a)} for n, (p, a) in enumerate(pairs, start=1)]
    return _transfer(ctx, account, legs=legs)


def transfer_batch(ctx: TicketContext) -> Draft:
    account = make_account(ctx.rng, ctx.ids)
    size = ctx.rng.choice((3, 4, 4))
    payees = ctx.rng.sample(ctx.population.payee_ids(None, False), size)
    lines: list[JSON] = []
    for number, payee_id in enumerate(payees, start=1):
        amount = (ctx.near(["transfer_new_payee", "transfer_reporting"], 4000, 9800, spread=0.2)
                  if ctx.rng.random() < 0.6 else round(ctx.rng.uniform(500, 3500), 2))
        lines.append({"line": number, **_part(ctx, payee_id, amount), "status": "pending", "reason": None})
    return _transfer(ctx, account, kind="payment_batch", lines=lines)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("txn_electronics", "txn", (ELECTRONICS,), txn_limit("electronics", ELECTRONICS, 150, 1100)),
    Family("txn_travel", "txn", (TRAVEL,), txn_limit("travel", TRAVEL, 300, 1700)),
    Family("txn_corridor", "txn", ("txn_corridor",), txn_corridor),
    Family("txn_gift_card", "txn", ("txn_gift_card_verification",), txn_gift_card),
    Family("txn_daily", "txn", ("txn_daily_cap",), txn_daily),
    Family("txn_plain", "txn", (), txn_plain),
    Family("txn_legs", "txn", (ELECTRONICS, TRAVEL, "txn_corridor", "txn_daily_cap"), txn_legs),
    Family("limit_standing", "limit", ("limit_standing",), limit_standing),
    Family("limit_cap", "limit", ("limit_cap",), limit_cap),
    Family("limit_new_account", "limit", ("limit_new_account_cap",), limit_new_account),
    Family("limit_legs", "limit", ("limit_cap", "limit_new_account_cap", "limit_standing"), limit_legs),
    Family("transfer_reporting", "transfer", ("transfer_reporting",), transfer_reporting),
    Family("transfer_new_payee", "transfer", ("transfer_new_payee",), transfer_new_payee),
    Family("transfer_watchlist", "transfer", ("transfer_watchlist",), transfer_watchlist),
    Family("transfer_legs", "transfer", ("transfer_new_payee", "transfer_reporting"), transfer_legs),
    Family("transfer_batch", "transfer", ("transfer_new_payee", "transfer_reporting"), transfer_batch),
)}

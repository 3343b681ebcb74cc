"""The people and places of a generated banking world: merchants, payees, accounts, identifiers.

Merchants and payees are shared by every task of a scenario; the policy keys on their category,
region, age and flags, never on the id itself, and ids are drawn at random so an id's digits
reveal nothing. Every ticket gets a fresh account, so no verdict can be recalled by account.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from simulators.protocol import JSON

__all__ = ["CATEGORIES", "Ids", "Population", "make_account", "make_population"]

_MERCHANT_NAMES: dict[str, tuple[str, ...]] = {
    "electronics": ("Anode Alley", "Brightwire", "Circuit Harbor", "Diode Depot", "Flux Supply", "Kilohm"),
    "travel": ("Farway Tours", "Gullwing Air", "Harborline Trips", "Milestone Fares", "Northbound Travel",
               "Passage & Co"),
    "jewelry": ("Bezel House", "Carat Lane", "Goldfinch Atelier", "Lustre Row", "Opal Yard", "Signet & Sons"),
    "gift_cards": ("CardCove", "GiftLatch", "Redeem Street", "StoredValue Hub", "TokenBay", "VoucherNest"),
    "groceries": ("Basket Hill", "Crate & Crumb", "Greenpantry", "Larder Lane", "Market Fold", "Root Cellar"),
    "dining": ("Ash & Ember", "Brassica Kitchen", "Dumpling Wharf", "Olive Street Grill", "Saltbox Cafe",
               "Tamarind Table"),
    "utilities": ("Citywater", "GridPoint Energy", "Heatline Gas", "Metro Fibre", "Riverbend Power",
                  "Tidewell Utility"),
    "fitness": ("Barbell Barn", "Corefield Gym", "Pulse Studio", "Ridgeline Climbing", "Stride Club",
                "Tempo Fitness"),
}
CATEGORIES: tuple[str, ...] = tuple(_MERCHANT_NAMES)

_PAYEE_NAMES = (
    "Amberly Freight", "Bellwether Supply", "Caldera Imports", "Driftwood Partners", "Eastgate Holdings",
    "Fernhill Trading", "Granary Logistics", "Halberd Capital", "Inkwell Exports", "Juniper Clearing",
    "Kestrel Shipping", "Lodestar Services", "Marlin Trade Co", "Northwind Remit", "Oakmont Group",
    "Pelican Wholesale", "Quayside Metals", "Riverstone Ltd", "Saltmarsh Textiles", "Tallgrass Ventures",
    "Umberfield Co", "Verdant Agri", "Wexford Tooling", "Yellowfin Marine",
)
_JURISDICTIONS = ("US", "UK", "SG", "DE", "AE", "CA")
_FIRST = ("Ada", "Bruno", "Chiara", "Dmitri", "Esme", "Farah", "Gideon", "Hanne", "Ismael", "Jovana",
          "Kenji", "Leila", "Mateo", "Nadia", "Oren", "Paloma", "Quentin", "Rosa", "Sami", "Talia",
          "Ugo", "Vera", "Wendell", "Ximena", "Yusuf", "Zara")
_LAST = ("Abara", "Brandt", "Castell", "Dubois", "Eklund", "Ferreira", "Gallo", "Haddad", "Ivanova",
         "Jansen", "Kowal", "Lindgren", "Moreno", "Nakamura", "Okafor", "Pires", "Quist", "Rahman",
         "Sorensen", "Toivonen", "Urbina", "Varga", "Weiss", "Yamada", "Zielinski")
_STATES = ("CA", "NY", "TX", "WA", "IL", "MA", "CO", "GA", "FL", "OR")
TODAY_YEAR, TODAY_MONTH = 2026, 8


@dataclass
class Ids:
    """Unique random identifiers in the benchmark's styles (ACC-######, TXN-######, MER-###)."""

    rng: random.Random
    used: set[str] = field(default_factory=set)

    def new(self, prefix: str, digits: int) -> str:
        low, high = 10 ** (digits - 1), 10 ** digits - 1
        while True:
            candidate = f"{prefix}-{self.rng.randint(low, high)}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate


@dataclass(frozen=True)
class Population:
    merchants: dict[str, dict[str, JSON]]
    payees: dict[str, dict[str, JSON]]

    def merchant_ids(self, category: str, region: str) -> list[str]:
        return [m for m, r in self.merchants.items() if r["category"] == category and r["region"] == region]

    def payee_ids(self, recent: bool | None = None, watchlist: bool | None = None) -> list[str]:
        """Payees by age (added fewer than 30 days ago) and watchlist flag; None = either."""
        return [p for p, r in self.payees.items()
                if (recent is None or (r["added_days_ago"] < 30) == recent)
                and (watchlist is None or ("watchlist" in r["restrictions"]) == watchlist)]


def _merchants(rng: random.Random, ids: Ids) -> dict[str, dict[str, JSON]]:
    rows = [(name, category, region) for category, names in _MERCHANT_NAMES.items()
            for name in names for region in ("domestic", "overseas")]
    rng.shuffle(rows)
    merchants = {}
    for name, category, region in rows:
        merchant_id = ids.new("MER", 3)
        merchants[merchant_id] = {"merchant_id": merchant_id, "name": name, "category": category, "region": region}
    return merchants


def _payees(rng: random.Random, ids: Ids) -> dict[str, dict[str, JSON]]:
    names = list(_PAYEE_NAMES)
    rng.shuffle(names)
    payees = {}
    for index, name in enumerate(names):
        payee_id = ids.new("PAY", 3)
        recent = index % 3 == 0  # a third of the payees were added within the last month
        payees[payee_id] = {
            "payee_id": payee_id, "name": name, "type": rng.choice(("business", "business", "individual")),
            "jurisdiction": _JURISDICTIONS[index % len(_JURISDICTIONS)],
            "added_days_ago": rng.randint(2, 27) if recent else rng.randint(45, 900),
            "restrictions": ["watchlist"] if index % 4 == 1 else [],
        }
    return payees


def make_population(rng: random.Random, ids: Ids) -> Population:
    return Population(_merchants(rng, ids), _payees(rng, ids))


def make_account(rng: random.Random, ids: Ids, **fixed: JSON) -> dict[str, JSON]:
    """A fresh account; `fixed` pins attributes a ticket is about (tenure, standing, today_total...)."""
    account_id = ids.new("ACC", 6)
    tenure = int(fixed.get("tenure_years", rng.randint(0, 9)))
    month = rng.randint(1, 12)
    opened_year = TODAY_YEAR - tenure - (1 if month > TODAY_MONTH else 0)
    account: dict[str, JSON] = {
        "account_id": account_id,
        "holder": f"{rng.choice(_FIRST)} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {rng.choice(_LAST)}",
        "state": rng.choice(_STATES),
        "verification": rng.choice(("verified", "verified", "basic")),
        "standing": "good",
        "tenure_years": tenure,
        "credit_limit": 500 * rng.randint(4, 8),
        "today_total": float(10 * rng.randint(0, 60)),
        "opened": f"{opened_year}-{month:02d}",
    }
    account.update(fixed)
    return account

"""Customer profiles: how much mentioning each attribute value is worth to the customer.

Weights: +2 strong like, +1 like, 0 neutral, -1 dislike, -3 red line. A profile lists its non-zero
weights by rule id (`<attribute>.<value>`, the policy-block schema); everything unlisted is neutral.

Two groups live here:
- the built-in suite's customers (`BUILTIN`), including the drifted and flipped variants the L2/L3
  schedules use;
- the documented customer of `policy.md` (`DOCUMENTED`), stale on purpose: it pushes hype and
  popularity that most current customers dislike, and forbids price talk some of them love.

A dataset in the public export's layout names no weights: its customers are read at grading time
from the prose of its own Oracle bulletins (`taste`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from simulators.domains.pitch.attributes import ATTRIBUTES, parse_rule_id, rule_id

__all__ = [
    "BUILTIN",
    "DOCUMENTED",
    "Profile",
    "profile_rules",
]

STRONG, LIKE, DISLIKE, RED = 2, 1, -1, -3


@dataclass(frozen=True)
class Profile:
    key: str
    family: str
    """The customer a variant derives from (the task line's `evaluator.family`)."""
    name: str
    summary: str
    weights: Mapping[str, int] = field(default_factory=dict)

    def weight(self, attribute: str, value: str) -> int:
        return self.weights.get(rule_id(attribute, value), 0)

    def variant(self, key: str, summary: str, changes: Mapping[str, int]) -> Profile:
        """The same customer with some weights changed (a drift or a reversal)."""
        return Profile(key, self.family, self.name, summary, {**self.weights, **changes})


def profile_rules(profile: Profile, dims: tuple[str, ...]) -> dict[str, int]:
    """The complete rule set for a tier: every value of every dimension, neutral ones included, so
    that a block overlays an older one rule by rule and leaves nothing stale behind."""
    return {rule_id(dim, value): profile.weight(dim, value) for dim in dims for value in ATTRIBUTES[dim]}


def _profile(key: str, name: str, summary: str, **weights: int) -> Profile:
    rules = {rule.replace("__", "."): w for rule, w in weights.items()}
    assert all(parse_rule_id(rule) for rule in rules), rules
    return Profile(key, key, name, summary, rules)


_BARGAIN = _profile(
    "bargain_hunter", "the bargain hunter",
    "Counts every coin: a low or sensible price and plenty of function are what sell it; paying extra "
    "for green, designer, handmade or hyped goods feels like money thrown away.",
    price__low=STRONG, price__mid=LIKE, price__high=RED, features__full=LIKE, launch__classic=LIKE,
    warranty__long_warranty=LIKE, availability__everywhere=LIKE, eco__eco=DISLIKE, buzz__viral=DISLIKE,
    design__unique=DISLIKE, warranty__final_sale=DISLIKE, origin__handcrafted=DISLIKE,
    availability__limited=DISLIKE,
)
_TRENDSETTER = _profile(
    "trendsetter", "the trendsetter",
    "Wants to be ahead of the crowd: new, bold, scarce and not yet discovered. Once everyone owns it or "
    "talks about it, it has lost its appeal; a cheap price cheapens it.",
    launch__just_launched=STRONG, design__unique=STRONG, popularity__niche=LIKE, buzz__under_the_radar=LIKE,
    price__high=LIKE, features__minimal=LIKE, availability__limited=LIKE, popularity__many_users=RED,
    buzz__viral=DISLIKE, price__low=DISLIKE, features__full=DISLIKE, launch__classic=DISLIKE,
)
_GREEN = _profile(
    "green_minimalist", "the green minimalist",
    "Buys little and buys green: sustainable materials and lean products with nothing to throw away; "
    "conventional materials are a deal breaker, and loud, feature-stuffed or pricey goods put them off.",
    eco__eco=STRONG, features__minimal=LIKE, origin__handcrafted=LIKE, warranty__long_warranty=LIKE,
    eco__regular=RED, features__full=DISLIKE, buzz__viral=DISLIKE, price__high=DISLIKE,
    origin__mass_produced=DISLIKE,
)
_SKEPTIC = _profile(
    "skeptic", "the marketing skeptic",
    "Distrusts sales talk: hype is an instant turn-off, crowd appeal and green claims read as marketing. "
    "Likes plain, pared-down products at an honest price with a solid warranty.",
    features__minimal=STRONG, buzz__under_the_radar=LIKE, price__low=LIKE, launch__classic=LIKE,
    warranty__long_warranty=LIKE, buzz__viral=RED, popularity__many_users=DISLIKE, features__full=DISLIKE,
    price__high=DISLIKE, eco__eco=DISLIKE, design__unique=DISLIKE, availability__limited=DISLIKE,
)
_CAUTIOUS = _profile(
    "cautious_planner", "the cautious planner",
    "Buys to avoid regret: a long warranty settles it, and a no-returns sale is out of the question. Trusts "
    "what is established, widely owned and easy to get; new, unusual or scarce items unsettle them.",
    warranty__long_warranty=STRONG, launch__classic=LIKE, popularity__many_users=LIKE,
    availability__everywhere=LIKE, design__classic=LIKE, price__mid=LIKE, origin__mass_produced=LIKE,
    warranty__final_sale=RED, launch__just_launched=DISLIKE, popularity__niche=DISLIKE,
    availability__limited=DISLIKE, design__unique=DISLIKE, buzz__viral=DISLIKE, origin__handcrafted=DISLIKE,
)
_POWER = _profile(
    "power_user", "the power user",
    "Wants capability: the more the product does the better, and a stripped-down one is unacceptable. "
    "Likes the latest, widely used and well-supported; has no patience for hype, eco trade-offs or scarcity.",
    features__full=STRONG, launch__just_launched=LIKE, popularity__many_users=LIKE, price__mid=LIKE,
    warranty__long_warranty=LIKE, origin__mass_produced=LIKE, features__minimal=RED, buzz__viral=DISLIKE,
    eco__eco=DISLIKE, price__high=DISLIKE, warranty__final_sale=DISLIKE, origin__handcrafted=DISLIKE,
    availability__limited=DISLIKE,
)
_COLLECTOR = _profile(
    "collector", "the collector",
    "Collects the rare and the crafted: handmade, hard-to-find pieces with a distinctive look, and is happy "
    "to pay for them. Factory goods are a deal breaker; mainstream appeal and hype put them off.",
    origin__handcrafted=STRONG, availability__limited=STRONG, design__unique=LIKE, price__high=LIKE,
    popularity__niche=LIKE, launch__classic=LIKE, origin__mass_produced=RED, availability__everywhere=DISLIKE,
    design__classic=DISLIKE, price__low=DISLIKE, popularity__many_users=DISLIKE, buzz__viral=DISLIKE,
)

_POWER_DRIFT = _POWER.variant(
    "power_user_budget",
    "Still wants capability, but money got tight: a low price now wins them over, a mid-range one no longer "
    "does, and a premium price is out of the question.",
    {"price.low": STRONG, "price.mid": 0, "price.high": RED, "launch.just_launched": 0},
)
_TRENDSETTER_FLIP = _TRENDSETTER.variant(
    "trendsetter_flipped",
    "Now chases what everyone is talking about: trending items and a big user base are the draw, and "
    "obscure, unknown ones have lost their pull.",
    {"buzz.viral": STRONG, "buzz.under_the_radar": DISLIKE, "popularity.many_users": LIKE,
     "popularity.niche": DISLIKE},
)

BUILTIN: dict[str, Profile] = {
    p.key: p for p in (_BARGAIN, _TRENDSETTER, _GREEN, _SKEPTIC, _CAUTIOUS, _POWER, _COLLECTOR,
                       _POWER_DRIFT, _TRENDSETTER_FLIP)
}

DOCUMENTED = _profile(
    "documented", "the mainstream shopper",
    "Responds to momentum: what is trending, popular, new and full of features, with a feel-good story "
    "(sustainable, handmade, exclusive). Price talk scares them off.",
    buzz__viral=STRONG, popularity__many_users=STRONG, features__full=LIKE, eco__eco=LIKE,
    launch__just_launched=LIKE, design__unique=LIKE, availability__limited=LIKE, origin__handcrafted=LIKE,
    price__low=DISLIKE, price__high=DISLIKE, buzz__under_the_radar=DISLIKE, popularity__niche=DISLIKE,
    features__minimal=DISLIKE, eco__regular=DISLIKE, launch__classic=DISLIKE, design__classic=DISLIKE,
    origin__mass_produced=DISLIKE, warranty__final_sale=RED,
)

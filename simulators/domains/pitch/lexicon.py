"""Phrases that assert an attribute value, and phrases that make claims no attribute covers.

Both the offline judge (what does a pitch assert?) and the scripted planner (which value does a sheet
line state?) read text through this one lexicon, so they can never disagree about a phrase.

Cues of different dimensions must not share a concept: `classic` alone would be both the launch and
the design value, `limited` alone both availability and a limited warranty, so neither bare word is a
cue. Overlapping hits resolve to the longest one (`no hype` is an under-the-radar claim, not a
negated `hype`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CueHit", "find_claims", "find_cues", "normalize"]

_CUES: dict[tuple[str, str], tuple[str, ...]] = {
    ("launch", "just_launched"): (
        r"just launched", r"newly launched", r"launched this season", r"new this season", r"brand[- ]new",
        r"new (?:release|arrival|launch)", r"latest release", r"debuted", r"fresh(?:ly)? (?:released|launched)",
        r"just (?:arrived|released|hit the market)",
    ),
    ("launch", "classic"): (
        r"on the market for years", r"(?:well|long)[- ]established", r"established", r"time[- ]tested",
        r"long[- ]?standing", r"around for years", r"years on the market", r"tried and (?:true|tested)",
        r"proven (?:over|for) (?:many )?years",
    ),
    ("popularity", "many_users"): (
        r"(?:large|big|huge|broad|wide) (?:user|owner|customer) base", r"user base",
        r"many (?:users|owners|people (?:own|use))", r"(?:widely|commonly) (?:owned|used)",
        r"owned by (?:many|thousands|millions|lots)", r"lots of (?:owners|users)", r"popular",
        r"(?:huge|large|big) (?:community|following)", r"crowd[- ]favou?rite", r"best[- ]?sell(?:ing|er)",
        r"countless (?:owners|users)",
    ),
    ("popularity", "niche"): (
        r"small number of (?:owners|users|buyers)", r"(?:small|tiny|select|limited) (?:user|owner|customer) base",
        r"(?:few|a handful of) (?:owners|users)", r"niche", r"not many (?:people|owners|users)",
        r"small (?:circle|group|community) of (?:owners|users|fans)", r"few people own",
    ),
    ("price", "low"): (
        r"budget[- ]friendly", r"affordabl[ey]", r"affordability", r"low[- ](?:price|priced|cost)", r"inexpensive",
        r"cheap(?:ly|er)?", r"wallet[- ]friendly", r"bargain", r"easy on the (?:wallet|budget)",
    ),
    ("price", "mid"): (
        r"mid[- ]range", r"mid[- ]priced", r"moderate(?:ly)?[- ]pric(?:e|ed)", r"middle[- ]of[- ]the[- ]range",
        r"(?:reasonabl[ey]|sensibl[ey]|fair(?:ly)?) pric(?:e|ed)",
    ),
    ("price", "high"): (
        r"premium(?:[- ]priced)?", r"high[- ]end", r"luxury", r"(?:top|upper)[- ]tier price", r"expensive",
        r"(?:high|higher|top)[- ]priced", r"splurge",
    ),
    ("design", "unique"): (
        r"distinctive", r"bold (?:design|look|styling|shape)", r"unique (?:design|look|style|styling)",
        r"one[- ]of[- ]a[- ]kind (?:design|look)", r"eye[- ]catching", r"striking",
        r"statement (?:design|look|piece)", r"unconventional (?:design|look)",
    ),
    ("design", "classic"): (
        r"understated", r"traditional (?:look|design|styling|exterior|appearance|lines)",
        r"timeless (?:look|design|styling)", r"classic (?:look|design|styling|lines|exterior)",
        r"low[- ]key (?:look|design|styling)", r"conservative (?:look|design|styling)",
    ),
    ("eco", "eco"): (
        r"sustainabl[ey]", r"sustainability", r"eco[- ]friendly", r"eco[- ]conscious", r"eco", r"recycled",
        r"organic", r"environmentally friendly", r"planet[- ]friendly", r"green materials", r"renewable materials",
    ),
    ("eco", "regular"): (
        r"(?:standard|conventional|ordinary|regular|everyday) materials",
    ),
    ("features", "full"): (
        r"feature[- ]rich", r"does a lot", r"(?:packed|loaded) with features", r"full[- ]featured",
        r"fully featured", r"(?:many|lots of|plenty of|every) features?", r"all the features",
        r"(?:rich|full|long) (?:feature set|set of features)", r"does it all", r"all[- ]in[- ]one",
    ),
    ("features", "minimal"): (
        r"(?:only )?(?:the )?essential functions", r"(?:just|only) the essentials", r"few extras", r"no[- ]frills",
        r"pared[- ](?:back|down)", r"stripped[- ](?:back|down)", r"minimal(?:ist)?", r"essentials only",
        r"nothing (?:extra|superfluous)",
    ),
    ("buzz", "viral"): (
        r"trending", r"much[- ]talked[- ]about", r"talked[- ]about", r"viral", r"buzz(?:y|ing)?", r"hyped?",
        r"everyone(?:'s| is) talking", r"talk of the town", r"all over social media",
        r"social media (?:sensation|hit|favou?rite)", r"making headlines",
    ),
    ("buzz", "under_the_radar"): (
        r"under the radar", r"rarely (?:mentioned|covered|written about)",
        r"(?:little|no|barely any) (?:press|hype|buzz|media attention)",
        r"low[- ]profile", r"quiet (?:reputation|favou?rite|achiever|pick)", r"hidden gem", r"off the radar",
        r"(?:out of|away from) the spotlight", r"(?:without|free of) (?:the )?hype", r"not (?:much )?hyped",
    ),
    ("warranty", "long_warranty"): (
        r"(?:long|extended|generous|multi[- ]year) warranty", r"warranty", r"easy returns",
        r"(?:hassle|worry)[- ]free returns", r"money[- ]back", r"returnable", r"(?:free|simple) returns",
        r"guaranteed?",
    ),
    ("warranty", "final_sale"): (
        r"final sale", r"sold as[- ]is", r"as[- ]is", r"no returns", r"non[- ]returnable",
        r"all sales (?:are )?final", r"cannot be returned",
    ),
    ("origin", "handcrafted"): (
        r"made by hand", r"hand[- ]?made", r"hand[- ]?crafted", r"crafted by hand", r"hand[- ]built",
        r"hand[- ]finished", r"artisan(?:al|s)?", r"by skilled hands",
    ),
    ("origin", "mass_produced"): (
        r"factory[- ](?:made|built)", r"(?:made|produced|built|manufactured) at scale", r"mass[- ]produced",
        r"mass production", r"machine[- ]made", r"industrially (?:made|produced)", r"production line",
    ),
    ("availability", "limited"): (
        r"hard[- ]to[- ](?:obtain|find|get)", r"(?:very )?few places",
        r"(?:few|select) (?:stores|shops|retailers|outlets)",
        r"limited (?:run|availability|stock|supply|edition|release|distribution)", r"scarce", r"rare find",
        r"short supply",
    ),
    ("availability", "everywhere"): (
        r"in stock everywhere", r"(?:available|stocked|sold|found) everywhere",
        r"widely (?:available|stocked)", r"easy to (?:find|get|buy)", r"readily available", r"any (?:store|shop)",
        r"always in stock", r"in stock",
    ),
}
"""(attribute, value) -> regexes over normalized (lower-case) text; matched on word boundaries."""

_CLAIMS: tuple[str, ...] = (
    r"water[- ]?proof", r"water[- ]resistant", r"free (?:shipping|delivery)", r"ships? (?:free|today|overnight|fast)",
    r"award[- ]winning", r"awards?", r"certified", r"certification", r"patent(?:ed)?", r"clinically",
    r"lab[- ]tested", r"light[- ]?weight", r"ultra[- ]?light", r"battery", r"lifetime", r"dishwasher[- ]safe",
    r"unbreakable", r"indestructible", r"shatter[- ]?proof", r"five[- ]star", r"(?:#|number )1",
    r"(?:fastest|lightest|strongest|quietest|toughest)", r"discount(?:ed)?", r"on sale", r"coupon",
    r"(?:doctor|expert|dermatologist)[- ]recommended", r"bpa[- ]free", r"non[- ]toxic",
    r"\d+(?:\.\d+)?[\s-]*(?:%|percent|hours?|hrs?|mah|gb|tb|watts?|kg|lbs?|ml|litres?|liters?|inch(?:es)?|cm|mm"
    r"|years?|months?|days?|stars?)",
)
"""Concrete factual claims no sheet attribute covers: specs, awards, shipping and price terms."""

_MOOD: tuple[str, ...] = (
    r"(?:skip|cut through|ignore|beyond|past|forget|no need for) (?:the |all the )?(?:hype|buzz)",
)
"""Stock phrases that contain a cue word but assert nothing about the product ("skip the hype").
They take part in overlap resolution and are then dropped, so they shadow the cue inside them."""
_NEUTRAL = ("", "")

_NEGATORS = frozenset({
    "not", "no", "never", "isn't", "isnt", "wasn't", "aren't", "without", "nor", "neither", "hardly",
    "don't", "doesn't", "won't",
})
_NEGATION_REACH = 3
"""How many words before a cue a negator may stand and still deny it."""


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])(?:" + "|".join(patterns) + r")(?![\w-])")


_CUE_PATTERNS: dict[tuple[str, str], re.Pattern[str]] = {pair: _compile(p) for pair, p in _CUES.items()}
_CUE_PATTERNS[_NEUTRAL] = _compile(_MOOD)
_CLAIM_PATTERN = _compile(_CLAIMS)


@dataclass(frozen=True)
class CueHit:
    attribute: str
    value: str
    start: int
    end: int
    text: str
    negated: bool


def normalize(text: str) -> str:
    """Lower case, typographic dashes and quotes made plain, so cues match as typed."""
    table = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": " ", "\u2014": " ",
                           "\u2019": "'", "\u2018": "'"})
    return text.translate(table).lower()


def find_cues(text: str) -> list[CueHit]:
    """Attribute-value assertions in `text`, in reading order, overlaps resolved to the longest."""
    low = normalize(text)
    raw = [
        (match.start(), match.end(), pair)
        for pair, pattern in _CUE_PATTERNS.items()
        for match in pattern.finditer(low)
    ]
    kept: list[tuple[int, int, tuple[str, str]]] = []
    for start, end, pair in sorted(raw, key=lambda hit: (hit[0] - hit[1], hit[0])):
        if all(end <= s or start >= e for s, e, _ in kept):
            kept.append((start, end, pair))
    kept.sort()
    return [CueHit(pair[0], pair[1], s, e, low[s:e], _negated(low, s)) for s, e, pair in kept if pair != _NEUTRAL]


def find_claims(text: str) -> list[str]:
    """Distinct unsupported-claim quotes in `text`, in reading order."""
    seen: list[str] = []
    for match in _CLAIM_PATTERN.finditer(normalize(text)):
        quote = " ".join(match.group(0).split())
        if quote not in seen:
            seen.append(quote)
    return seen


def _negated(low: str, start: int) -> bool:
    """A negator among the few words before the cue, inside the same clause."""
    clause = re.split(r"[.;:!?,()]", low[max(0, start - 60):start])[-1]
    before = re.findall(r"[\w']+", clause)
    return any(word in _NEGATORS for word in before[-_NEGATION_REACH:])

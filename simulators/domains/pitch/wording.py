"""Every piece of surface text the pitch domain writes: sheet lines, instruction frames, pitch
sentences, value labels, product names.

Several phrasings per sheet fact and per instruction frame keep the surface from repeating verbatim
across tasks. Each sheet phrasing and pitch sentence must be read by `lexicon.find_cues` as exactly
its own value (the tests check it), and filler sentences as nothing at all.
"""

from __future__ import annotations

__all__ = [
    "CATEGORIES",
    "CLOSINGS",
    "FILLERS",
    "LABELS",
    "LEADS",
    "NAME_FIRST",
    "NAME_SECOND",
    "OPENINGS",
    "PITCH_SENTENCES",
    "SHEET_PHRASINGS",
]

SHEET_PHRASINGS: dict[tuple[str, str], tuple[str, ...]] = {
    ("launch", "just_launched"): ("new this season", "a brand-new release"),
    ("launch", "classic"): ("well-established, sold for many years", "a long-standing model"),
    ("popularity", "many_users"): ("owned by many people already", "a huge user base"),
    ("popularity", "niche"): ("known to few owners so far", "a small owner base"),
    ("price", "low"): ("easy on the wallet", "an inexpensive price tag"),
    ("price", "mid"): ("a mid-range price point", "moderately priced"),
    ("price", "high"): ("premium-priced", "a high-end price tag"),
    ("design", "unique"): ("a distinctive, bold design", "an eye-catching look"),
    ("design", "classic"): ("an understated, traditional look", "a timeless look"),
    ("eco", "eco"): ("built from sustainable materials", "made with recycled materials"),
    ("eco", "regular"): ("conventional materials", "ordinary materials"),
    ("features", "full"): ("full-featured", "packed with features"),
    ("features", "minimal"): ("no-frills, essentials only", "a pared-back function set"),
    ("buzz", "viral"): ("trending right now", "talked about all over social media"),
    ("buzz", "under_the_radar"): ("gets little press attention", "a low-profile item"),
    ("warranty", "long_warranty"): ("comes with a generous multi-year warranty", "an extended warranty"),
    ("warranty", "final_sale"): ("all sales final", "non-returnable"),
    ("origin", "handcrafted"): ("handmade by artisans", "crafted by hand"),
    ("origin", "mass_produced"): ("mass-produced in a factory", "made at scale on a production line"),
    ("availability", "limited"): ("a limited run, hard to find", "sold in few stores"),
    ("availability", "everywhere"): ("widely available in stores", "easy to find in any store"),
}
"""How a product sheet states each fact (the built-in suite's own phrasings)."""

PITCH_SENTENCES: dict[tuple[str, str], str] = {
    ("launch", "just_launched"): "It is a brand-new release this season.",
    ("launch", "classic"): "It is a well-established model with years on the market.",
    ("popularity", "many_users"): "A large user base already relies on it.",
    ("popularity", "niche"): "Only a handful of owners have one so far.",
    ("price", "low"): "Its price is budget-friendly.",
    ("price", "mid"): "It sits at a sensible mid-range price.",
    ("price", "high"): "It comes at a premium price.",
    ("design", "unique"): "Its bold design is truly distinctive.",
    ("design", "classic"): "Its look is understated and quietly elegant.",
    ("eco", "eco"): "Its materials are sustainably sourced.",
    ("eco", "regular"): "It is made of conventional materials.",
    ("features", "full"): "It is packed with features for every job.",
    ("features", "minimal"): "It offers just the essentials, nothing more.",
    ("buzz", "viral"): "It is the talk of the town right now.",
    ("buzz", "under_the_radar"): "It has flown under the radar, with little press so far.",
    ("warranty", "long_warranty"): "A generous warranty backs every purchase.",
    ("warranty", "final_sale"): "It is a final sale item that cannot be returned.",
    ("origin", "handcrafted"): "Each one is made by hand.",
    ("origin", "mass_produced"): "It is built on a modern production line.",
    ("availability", "limited"): "Only a few shops carry it, so it is a rare find.",
    ("availability", "everywhere"): "You can pick one up in almost any store.",
}
"""The one sentence a scripted pitch uses to state a fact."""

LABELS: dict[tuple[str, str], str] = {
    ("launch", "just_launched"): "just launched",
    ("launch", "classic"): "long established on the market",
    ("popularity", "many_users"): "a large user base",
    ("popularity", "niche"): "a niche following",
    ("price", "low"): "an affordable price",
    ("price", "mid"): "a moderate price",
    ("price", "high"): "a high-end price",
    ("design", "unique"): "a striking, one-off design",
    ("design", "classic"): "an understated, traditional look",
    ("eco", "eco"): "sustainable materials",
    ("eco", "regular"): "conventional materials",
    ("features", "full"): "a rich feature set",
    ("features", "minimal"): "essential functions only",
    ("buzz", "viral"): "trending, the talk of the town",
    ("buzz", "under_the_radar"): "under the radar, little press",
    ("warranty", "long_warranty"): "a long warranty",
    ("warranty", "final_sale"): "no returns accepted",
    ("origin", "handcrafted"): "handcrafted",
    ("origin", "mass_produced"): "mass-produced",
    ("availability", "limited"): "a limited run, scarce",
    ("availability", "everywhere"): "easy to find anywhere",
}
"""Short names of attribute values for bulletins and documents."""

OPENINGS: tuple[str, ...] = (
    "Meet the {name}, a {category} worth your attention.",
    "Say hello to the {name}, our {category} for you.",
    "Here is the {name}, a {category} we are glad to share.",
)
FILLERS: tuple[str, ...] = (
    "Take a closer look and picture it in your day.",
    "See for yourself how well it fits the way you live.",
    "We think it deserves a spot on your list.",
    "Give it a try and judge it on its merits.",
    "It is ready whenever you are.",
    "Let it speak for itself.",
)
"""Mood sentences that assert nothing about the product: they pad a short pitch to 40 words."""

LEADS: tuple[str, ...] = ("Product to pitch:", "Next product to pitch:", "Pitch this product:")
CLOSINGS: tuple[str, ...] = ("Write your pitch.", "Write the pitch for this product.", "Please write your sales pitch.")

CATEGORIES: tuple[str, ...] = (
    "trail backpack", "desk organizer", "electric kettle", "reading lamp", "running shoes", "french press",
    "sketchbook", "camping chair", "yoga block", "tablet sleeve", "lunch box", "portable speaker", "chef's knife",
    "gym bag", "mechanical pencil", "rain jacket", "frying pan", "wristwatch", "bookshelf", "bike helmet",
)
NAME_FIRST: tuple[str, ...] = (
    "Bram", "Calyx", "Dune", "Ferro", "Gale", "Hollis", "Juno", "Kestrel", "Lumen", "Marlow", "Oslo", "Pike",
    "Quill", "Rook", "Sable", "Tamsin",
)
NAME_SECOND: tuple[str, ...] = (
    "Arc", "Atlas", "Crest", "Form", "Mode", "Point", "Shift", "Trail", "Wave", "Vista", "Loop", "Nest",
)

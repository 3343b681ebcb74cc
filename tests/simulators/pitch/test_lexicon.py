"""Every phrase the domain writes reads as exactly the value it means, and filler as nothing."""

from __future__ import annotations

import pytest

from simulators.domains.pitch.attributes import ATTRIBUTES, all_pairs, parse_rule_id, rule_id
from simulators.domains.pitch.lexicon import find_claims, find_cues
from simulators.domains.pitch.sheet import parse_sheet
from simulators.domains.pitch.wording import (
    CATEGORIES,
    FILLERS,
    LABELS,
    NAME_FIRST,
    NAME_SECOND,
    OPENINGS,
    PITCH_SENTENCES,
    SHEET_PHRASINGS,
)

EXPORT_STYLE_LINES = {
    ("launch", "just_launched"): "just launched this season",
    ("launch", "classic"): "on the market for years, well-established",
    ("popularity", "many_users"): "already has a large user base",
    ("popularity", "niche"): "has only a small number of owners",
    ("price", "low"): "budget-friendly price",
    ("price", "mid"): "mid-range price",
    ("price", "high"): "premium price",
    ("design", "unique"): "bold, distinctive design",
    ("design", "classic"): "a visually traditional, understated exterior",
    ("eco", "eco"): "made from sustainable / eco materials",
    ("eco", "regular"): "standard materials",
    ("features", "full"): "feature-rich, does a lot",
    ("features", "minimal"): "provides only the essential functions, with few extras",
    ("buzz", "viral"): "a trending, much-talked-about item",
    ("buzz", "under_the_radar"): "rarely mentioned in the press or on social media",
    ("warranty", "long_warranty"): "backed by a long warranty and easy returns",
    ("warranty", "final_sale"): "sold as-is, final sale",
    ("origin", "handcrafted"): "made by hand rather than by machine",
    ("origin", "mass_produced"): "factory-made at scale",
    ("availability", "limited"): "stocked in very few places and hard to obtain",
    ("availability", "everywhere"): "in stock everywhere",
}
"""Sheet lines as the public export words them."""


def values_read(text: str) -> set[tuple[str, str, bool]]:
    return {(hit.attribute, hit.value, hit.negated) for hit in find_cues(text)}


@pytest.mark.parametrize("pair", all_pairs())
def test_each_phrase_reads_as_its_own_value(pair: tuple[str, str]) -> None:
    texts = [*SHEET_PHRASINGS[pair], PITCH_SENTENCES[pair], LABELS[pair], EXPORT_STYLE_LINES[pair]]
    for text in texts:
        assert values_read(text) == {(*pair, False)}, text
        assert find_claims(text) == [], text


def test_filler_and_names_assert_nothing() -> None:
    for text in (*FILLERS, *OPENINGS, *CATEGORIES, *NAME_FIRST, *NAME_SECOND):
        assert find_cues(text) == [] and find_claims(text) == [], text


def test_longest_overlapping_cue_wins() -> None:
    assert values_read("no hype, just results") == {("buzz", "under_the_radar", False)}
    assert values_read("non-returnable") == {("warranty", "final_sale", False)}


def test_export_sheet_parses_to_its_values() -> None:
    facts = "\n".join(f"  - {line}" for line in EXPORT_STYLE_LINES.values())
    sheet = parse_sheet(f"Current timestamp: 3\n\nProduct to pitch:\nProduct: Terra Co. X (duffel bag)\n"
                        f"Facts:\n{facts}\n\nWrite your pitch.")
    assert (sheet.name, sheet.category) == ("Terra Co. X", "duffel bag")
    assert [(i.attribute, i.value) for i in sheet.items] == list(EXPORT_STYLE_LINES)


def test_rule_ids_round_trip() -> None:
    for attribute, values in ATTRIBUTES.items():
        for value in values:
            assert parse_rule_id(rule_id(attribute, value)) == (attribute, value)
    assert parse_rule_id("price.free") is None
    assert parse_rule_id("refund.window") is None

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

PARAPHRASES = {
    ("launch", "just_launched"): "hit the shelves as a new arrival",
    ("launch", "classic"): "a tried and tested model, around for years",
    ("popularity", "many_users"): "a crowd favourite with a big customer base",
    ("popularity", "niche"): "known to a small circle of owners",
    ("price", "low"): "priced to be affordable",
    ("price", "mid"): "reasonably priced, middle of the range",
    ("price", "high"): "a high-end, luxury price",
    ("design", "unique"): "a striking statement piece",
    ("design", "classic"): "a timeless design with an understated finish",
    ("eco", "eco"): "made with eco-friendly, renewable materials",
    ("eco", "regular"): "made from everyday materials",
    ("features", "full"): "an all-in-one that does it all",
    ("features", "minimal"): "a no-frills tool with nothing extra",
    ("buzz", "viral"): "a social media sensation, making headlines",
    ("buzz", "under_the_radar"): "a hidden gem kept out of the spotlight",
    ("warranty", "long_warranty"): "backed by a multi-year warranty and hassle-free returns",
    ("warranty", "final_sale"): "non-returnable: all sales are final",
    ("origin", "handcrafted"): "hand-finished by artisans",
    ("origin", "mass_produced"): "machine-made in a large plant",
    ("availability", "limited"): "a limited edition in short supply",
    ("availability", "everywhere"): "readily available, always in stock",
}
"""Sheet lines worded unlike any of the domain's own tables: the judge must read paraphrases."""


def values_read(text: str) -> set[tuple[str, str, bool]]:
    return {(hit.attribute, hit.value, hit.negated) for hit in find_cues(text)}


@pytest.mark.parametrize("pair", all_pairs())
def test_each_phrase_reads_as_its_own_value(pair: tuple[str, str]) -> None:
    texts = [*SHEET_PHRASINGS[pair], PITCH_SENTENCES[pair], LABELS[pair], PARAPHRASES[pair]]
    for text in texts:
        assert values_read(text) == {(*pair, False)}, text
        assert find_claims(text) == [], text


def test_filler_and_names_assert_nothing() -> None:
    for text in (*FILLERS, *OPENINGS, *CATEGORIES, *NAME_FIRST, *NAME_SECOND):
        assert find_cues(text) == [] and find_claims(text) == [], text


def test_longest_overlapping_cue_wins() -> None:
    assert values_read("no hype, just results") == {("buzz", "under_the_radar", False)}
    assert values_read("non-returnable") == {("warranty", "final_sale", False)}


def test_a_paraphrased_sheet_parses_to_its_values() -> None:
    facts = "\n".join(f"  - {line}" for line in PARAPHRASES.values())
    sheet = parse_sheet(f"Current timestamp: 3\n\nProduct to pitch:\nProduct: Larkspur Two (duffel bag)\n"
                        f"Facts:\n{facts}\n\nWrite your pitch.")
    assert (sheet.name, sheet.category) == ("Larkspur Two", "duffel bag")
    assert [(i.attribute, i.value) for i in sheet.items] == list(PARAPHRASES)


def test_rule_ids_round_trip() -> None:
    for attribute, values in ATTRIBUTES.items():
        for value in values:
            assert parse_rule_id(rule_id(attribute, value)) == (attribute, value)
    assert parse_rule_id("price.free") is None
    assert parse_rule_id("refund.window") is None

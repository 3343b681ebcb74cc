"""The offline judge's labels and invented claims on hand-written pitches."""

from __future__ import annotations

from simulators.domain import JudgeItem, JudgeRequest
from simulators.domains.pitch.judge import LEXICON_JUDGE, label_pitch

ITEMS = (
    JudgeItem("popularity", "a big customer base"),
    JudgeItem("price", "easy on the wallet"),
    JudgeItem("eco", "conventional materials"),
    JudgeItem("features", "packed with features"),
    JudgeItem("buzz", "trending right now"),
)


def labels_of(pitch: str) -> tuple[dict[str, str], tuple[str, ...]]:
    verdict = label_pitch(JudgeRequest("Quarry Nine (lunch box)", ITEMS, pitch))
    return dict(verdict.labels), verdict.invented_claims


def test_paraphrases_are_mentions() -> None:
    labels, invented = labels_of("The Quarry Nine is affordable and packed with features. Give it a try.")
    assert labels == {"popularity": "not_addressed", "price": "mentioned", "eco": "not_addressed",
                      "features": "mentioned", "buzz": "not_addressed"}
    assert invented == ()


def test_another_value_of_the_attribute_is_a_contradiction() -> None:
    labels, _ = labels_of("A premium lunch box with a pared-down design, made from sustainable materials.")
    assert labels["price"] == "contradicted"
    assert labels["features"] == "contradicted"
    assert labels["eco"] == "contradicted"


def test_denying_the_stated_value_is_a_contradiction() -> None:
    labels, _ = labels_of("It is not trending at all, and it is not cheap either.")
    assert labels["buzz"] == "contradicted"
    assert labels["price"] == "contradicted"


def test_denying_another_value_is_not_a_contradiction() -> None:
    labels, _ = labels_of("It is not a niche product: a large user base relies on it.")
    assert labels["popularity"] == "mentioned"


def test_negation_does_not_leak_across_clauses() -> None:
    labels, _ = labels_of("No gimmicks. Trending everywhere online, it is budget-friendly.")
    assert labels["buzz"] == "mentioned"
    assert labels["price"] == "mentioned"


def test_off_sheet_attributes_and_specs_are_invented() -> None:
    labels, invented = labels_of(
        "Budget-friendly, handmade, waterproof, with a 10-year warranty and free shipping. Easy returns too.")
    assert labels["price"] == "mentioned"
    # origin and warranty are not on this sheet; "easy returns" repeats the warranty claim, so it is
    # one claim per missing attribute however often it is made
    assert invented == ("handmade", "warranty", "waterproof", "10-year", "free shipping")


def test_product_name_and_category_are_never_claims() -> None:
    request = JudgeRequest("Eco Trend 5 (premium kettle)", (JudgeItem("price", "low-priced"),),
                           "The Eco Trend 5 premium kettle has a budget-friendly price.")
    verdict = label_pitch(request)
    assert verdict.labels == {"price": "mentioned"}
    assert verdict.invented_claims == ()


def test_mood_language_is_not_a_claim() -> None:
    labels, invented = labels_of("You will love it. We think it deserves a spot on your list.")
    assert set(labels.values()) == {"not_addressed"}
    assert invented == ()


def test_unreadable_fact_falls_back_to_its_words() -> None:
    request = JudgeRequest("X (y)", (JudgeItem("colour", "finished in deep cobalt blue"),),
                           "Finished in a deep cobalt blue.")
    assert label_pitch(request).labels == {"colour": "mentioned"}


async def test_judge_protocol_and_name() -> None:
    verdict = await LEXICON_JUDGE.assess(JudgeRequest("X (y)", ITEMS, "Affordable."))
    assert verdict.judge == LEXICON_JUDGE.name == "lexicon"
    assert verdict.labels["price"] == "mentioned"


def test_stock_mood_phrases_shadow_the_cue_inside_them() -> None:
    labels, invented = labels_of("Skip the hype: it is affordable.")
    assert labels["buzz"] == "not_addressed" and labels["price"] == "mentioned"
    assert invented == ()

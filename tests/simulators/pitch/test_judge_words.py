"""The offline judge's fallback for a fact its lexicon cannot read: mentioned when at least 3 in 5 of the
fact's content words (longer than three letters, stopwords out) appear in the pitch as whole words.
Each case was let through by a mutation of the judge (bench/README.md, "Mutation testing")."""

from __future__ import annotations

import pytest

from simulators.domains.pitch.judge import MENTIONED, NOT_ADDRESSED, _label_by_words

FACT = "walnut handle, copper rivets, linen strap, brass buckle, cotton lining"  # 10 content words


@pytest.mark.parametrize(("pitch", "label"), [
    ("walnut handle copper rivets linen strap", MENTIONED),  # 6 of 10: exactly 3 in 5
    ("walnut handle copper rivets linen", NOT_ADDRESSED),  # 5 of 10
    ("walnuts handled coppery", NOT_ADDRESSED),  # whole words only
    ("", NOT_ADDRESSED),
])
def test_most_content_words_make_a_mention(pitch: str, label: str) -> None:
    assert _label_by_words(FACT, pitch) == label


def test_short_words_and_stopwords_do_not_count() -> None:
    # "made with oak" has one content word ("made"): the pitch holding it is a mention, of 1 of 1.
    assert _label_by_words("made with oak", "made") == MENTIONED
    assert _label_by_words("made with oak", "with oak") == NOT_ADDRESSED
    # Only stopwords and short words: nothing to look for.
    assert _label_by_words("with only that oak", "with only that oak") == NOT_ADDRESSED
    # Four-letter words count: 3 of 4 here ("easy", "grip", "bold"; not "soft").
    assert _label_by_words("easy grip, soft bold", "easy grip and bold") == MENTIONED
    assert _label_by_words("easy grip, soft bold", "easy") == NOT_ADDRESSED

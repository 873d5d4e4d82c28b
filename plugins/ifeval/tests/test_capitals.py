"""All-capital word counts against nltk's Treebank tokenizer, the one IFEval counts with.

IFEval's ``nltk.word_tokenize`` cuts the text into Punkt sentences, then each
sentence into Treebank words: the comparison tokenizes each of the plugin's
sentences (nltk's Punkt, ``sentences.py``) with nltk's ``NLTKWordTokenizer``.
``test_lm_eval_parity.py`` compares the whole count with IFEval's own.
"""

from __future__ import annotations

import random

import pytest
from nltk.tokenize.destructive import NLTKWordTokenizer
from verl_rewards_ifeval.capitals import count_capital_words
from verl_rewards_ifeval.sentences import split_sentences

TREEBANK = NLTKWordTokenizer()

CASES = [
    "I LOVE THIS. IT'S GREAT!", "DON'T STOP", "WE CANNOT GO", "A;B C,D E:1", "HELLO--WORLD",
    "U.S.A. IS BIG.", "I'M HERE. YOU'RE THERE.", "GONNA WANNA GOTTA", "'TIS TRUE", "(NASA) [ESA] {JAXA}",
    "\"QUOTED\" 'SINGLE'", "THE END...", "A...B", "ABC'S DEF'LL", "It's OK", "IT's", "MORE'N D'YE",
    "*BOLD* **X**", "X-CANNOT", "A''B", "— EM—DASH", "Don't WORRY be HAPPY, ok?", "NO,NO,NO", "12:30 PM",
    "AM/PM", "e.g. USA", "HI!!!", "WANNA.", "IT'S.", "ÉCOLE ÇA VA. ΟΔΟΣ", "WE'VE WE'VE'S N'T", "A,,B A,,1",
    "LEMME GIMME", "«QUOI» “WHAT” ‘WHO’", "A#B$C%D&E@F", "X'", "''", "Ǆ ǅ", "THE (END)", "A.B.C. D.",
]


def _nltk_count(text: str) -> int:
    return sum(1 for sentence in split_sentences(text) for token in TREEBANK.tokenize(sentence)
               if token.isupper())


@pytest.mark.parametrize("text", CASES)
def test_capital_words_match_nltk_on_hand_made_text(text: str) -> None:
    assert count_capital_words(text) == _nltk_count(text)


def test_capital_words_match_nltk_on_random_text() -> None:
    rng = random.Random(3)
    pieces = ["A", "B", "a", "'", "S", "s", "T", "N", ",", ":", "1", ".", " ", " ", "-", ";", "(", ")", '"',
              "*", "?", "CAN", "NOT", "LL", "nna", "GON", "!", "é", "É", "\n", "…", "#"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert count_capital_words(text) == _nltk_count(text), repr(text)

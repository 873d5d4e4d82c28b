"""The sentence splitter that stands in for nltk's downloadable English Punkt model."""

from __future__ import annotations

import pytest
from verl_rewards_ifeval.sentences import count_sentences, split_sentences


@pytest.mark.parametrize(("text", "sentences"), [
    ("", []),
    ("  \n ", []),
    ("No end mark", ["No end mark"]),
    ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
    ("Really?! Yes.", ["Really?!", "Yes."]),
    ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
    ("(See above.) Next one.", ["(See above.)", "Next one."]),
    ("a lowercase start. still a break", ["a lowercase start.", "still a break"]),
    ("Dr. Smith met Mr. Jones.", ["Dr. Smith met Mr. Jones."]),
    ("Fruit, e.g. apples, etc. The end.", ["Fruit, e.g. apples, etc.", "The end."]),
    ("I live in the U.S. and work.", ["I live in the U.S. and work."]),
    ("J. K. Rowling wrote it.", ["J. K. Rowling wrote it."]),
    ("Wait... what? Then... Silence.", ["Wait... what?", "Then...", "Silence."]),
    ("1. First item\n2. second item", ["1.", "First item\n2. second item"]),
    ("Price is 3.50 dollars. Ok.", ["Price is 3.50 dollars.", "Ok."]),
    ("Ends.Without space", ["Ends.Without space"]),
    ("Ça va. Très bien! 你好。", ["Ça va.", "Très bien!", "你好。"]),
])
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences
    assert count_sentences(text) == len(sentences)

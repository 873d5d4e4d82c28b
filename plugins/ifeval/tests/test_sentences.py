"""Sentences as nltk's Punkt tokenizer with its English model splits them (IFEval's counting).

The expected lists are ``nltk.sent_tokenize``'s (tests/test_lm_eval_parity.py checks the
tokenizer against nltk loading the same model through its own ``punkt_tab`` reader).
"""

from __future__ import annotations

import random
import time

import pytest
from nltk import redos
from nltk.tokenize.punkt import PunktSentenceTokenizer
from verl_rewards_ifeval import budget
from verl_rewards_ifeval.sentences import clear_caches, count_sentences, english_parameters, split_sentences

from verl_rewards.limits import deadline_of


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
    # Punkt's English model does not hold e.g, etc, i.e, cf, no, approx, fig, vol as abbreviations:
    # a sentence ends after them, even before a lowercase word.
    ("Fruit, e.g. apples, etc. The end.", ["Fruit, e.g.", "apples, etc.", "The end."]),
    ("Bring tools, etc. and food.", ["Bring tools, etc.", "and food."]),
    ("Use a map, i.e. the old one.", ["Use a map, i.e.", "the old one."]),
    ("See the notes, cf. the appendix.", ["See the notes, cf.", "the appendix."]),
    ("It is no. 4 on the list.", ["It is no.", "4 on the list."]),
    ("It is approx. ten miles.", ["It is approx.", "ten miles."]),
    ("See fig. 3 here.", ["See fig.", "3 here."]),
    ("Read vol. two.", ["Read vol.", "two."]),
    ("She has a Ph.D. in math.", ["She has a Ph.D. in math."]),
    ("It ended... and then it began.", ["It ended... and then it began."]),
    ("It ended... The next day.", ["It ended...", "The next day."]),
    ("It ended… the next day.", ["It ended… the next day."]),
    ("I live in the U.S. and work.", ["I live in the U.S. and work."]),
    ("J. K. Rowling wrote it.", ["J. K. Rowling wrote it."]),
    ("Wait... what? Then... Silence.", ["Wait... what?", "Then...", "Silence."]),
    ("1. First item\n2. second item", ["1.", "First item\n2. second item"]),
    ("Price is 3.50 dollars. Ok.", ["Price is 3.50 dollars.", "Ok."]),
    ("Ends.Without space", ["Ends.Without space"]),
    ("Ça va. Très bien! 你好。", ["Ça va. Très bien!", "你好。"]),
])
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences
    assert count_sentences(text) == len(sentences)


def _plain_punkt() -> PunktSentenceTokenizer:
    return PunktSentenceTokenizer(english_parameters())


def test_sentences_are_nltks_plain_punkt_on_random_text() -> None:
    """The memoized verdicts and the unguarded candidate scan move no boundary."""
    plain = _plain_punkt()
    rng = random.Random(8)
    pieces = ["A", "a", "Mr", "etc", "e.g", "Ph.D", "U.S", "no", "The", "the", "It", "3", "2.5", ".", ".", "...",
              "…", "?", "!", " ", " ", " ", "\n", "\n\n", '"', "'", ")", "(", "”", "“", "*", "-", ":", ";", ",",
              "é", "Ça", "你好", "。", "1."]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 20)))
        assert split_sentences(text) == plain.tokenize(text), repr(text)
        assert count_sentences(text) == len(plain.tokenize(text)), repr(text)


def test_a_long_response_is_split_where_nltks_wall_clock_guard_would_raise(monkeypatch) -> None:
    """nltk times its candidate scan as one lazy iteration; a long response must not trip it."""
    text = "It works. " * 20_000
    monkeypatch.setattr(redos, "DEFAULT_TIMEOUT", 0.05)
    with pytest.raises(TimeoutError, match="time limit"):
        _plain_punkt().tokenize(text)
    clear_caches()
    assert count_sentences(text) == 20_000


def test_a_pass_out_of_time_stops_at_a_candidate_and_caches_nothing() -> None:
    text = "It works. " * 2_000
    clear_caches()
    with deadline_of(10.0, started=time.monotonic() - 10.0), budget.checks_bounded():
        with pytest.raises(budget.OutOfTime):
            count_sentences(text)
    assert count_sentences(text) == 2_000  # the stopped pass left no partial spans behind


def test_sentences_are_nltks_plain_punkt_where_closing_marks_follow_boundaries() -> None:
    """The realignment of closing punctuation runs nltk's own pattern without its timer."""
    plain = _plain_punkt()
    rng = random.Random(3)
    pieces = ["A", "b", ".", "?", "!", " ", "\n", '"', "'", ")", "]", "}", "”", "’", "«", "»", "--", "-", "x."]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 24)))
        assert split_sentences(text) == plain.tokenize(text), repr(text)

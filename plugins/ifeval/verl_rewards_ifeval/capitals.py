"""Counting all-capital words the way IFEval does, in linear time.

IFEval counts the tokens of ``nltk.word_tokenize`` whose ``str.isupper()`` is
true: nltk's Punkt sentences (``sentences.py``, nltk's own tokenizer), each cut
into words by the Penn Treebank rules. Those rules run a chain of regular
expression substitutions: about 17 s on a megabyte of ``*`` here. Only the
splits that can change the count matter: punctuation carries no case, so
splitting it off a word never changes whether the word is upper-case; what
matters is where a split separates two cased parts (``A;B``, ``IT'S``,
``CANNOT``). This module makes those splits with ``str.translate`` and
suffix checks, in linear time, on each Punkt sentence;
``tests/test_capitals.py`` compares its counts with nltk's tokenizer.
"""

from __future__ import annotations

import re

from verl_rewards_ifeval.sentences import split_sentences

# Characters the Treebank rules always split off (none of them has a case).
_SEPARATORS = str.maketrans(dict.fromkeys("«“‘„`;@#$%&\u2012\u2013\u2014\u2015?!*[](){}<>\"»”’", " "))
_DOT_RUN = re.compile(r"\.{2,}")
# An opening quote (no word character before it, one after it) that starts no clitic.
_OPENING_QUOTE = re.compile(r"(?<!\w)'(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", re.IGNORECASE)
_COMMA_BEFORE_NON_DIGIT = re.compile(r"[:,](?!\d)")
# A clitic at the end of a word is its own token: first 's 'm 'd (any case) or a
# lone quote, then 'll 're 've n't (all lower or all upper case).
_CLITICS_1 = ("'s", "'S", "'m", "'M", "'d", "'D", "'")
_CLITICS_2 = ("'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T")
# Words the Treebank rules cut in two ("can not", "gon na"); its "'t is" rule never
# fires, an earlier rule having split the quote off.
_FUSED = re.compile(
    r"\b(?:(can)(not)|(d)('ye)|(gim)(me)|(gon)(na)|(got)(ta)|(lem)(me)|(more)('n))\b|\b(wan)(na)$",
    re.IGNORECASE,
)
_FUSED_HINT = ("cannot", "'ye", "gimme", "gonna", "gotta", "lemme", "more'n", "wanna")


def count_capital_words(text: str) -> int:
    """How many of the response's word tokens are upper-case (``str.isupper``)."""
    return sum(_count_in_sentence(sentence) for sentence in split_sentences(text))


def _count_in_sentence(sentence: str) -> int:
    sentence = _drop_final_period(sentence)
    sentence = sentence.translate(_SEPARATORS).replace("--", " ").replace("''", " ")
    sentence = _COMMA_BEFORE_NON_DIGIT.sub(" ", _DOT_RUN.sub(" ", sentence))
    if "'" in sentence:
        sentence = _OPENING_QUOTE.sub("' ", sentence)
    return sum(_count_in_word(word) for word in sentence.split())


def _drop_final_period(sentence: str) -> str:
    """The sentence without its final period (which the Treebank rules make a token)."""
    body = sentence.rstrip("])}>\"'»”’ \t\n\r\f\v")
    if len(body) >= 2 and body[-1] == "." and body[-2] != ".":
        return body[:-1] + " " + sentence[len(body) :]
    return sentence


def _count_in_word(word: str) -> int:
    if "'" not in word and not _has_fused_hint(word):
        return 1 if word.isupper() else 0
    return sum(1 for part in _split_word(word) if part.isupper())


def _has_fused_hint(word: str) -> bool:
    low = word.lower()
    return any(hint in low for hint in _FUSED_HINT)


def _split_word(word: str) -> list[str]:
    head, tail = _split_suffix(word, _CLITICS_1)
    head, tail2 = _split_suffix(head, _CLITICS_2)
    parts = []
    for part in (head, tail2, tail):
        if part:
            parts.extend(_split_fused(part))
    return parts


def _split_suffix(word: str, suffixes: tuple[str, ...]) -> tuple[str, str]:
    for suffix in suffixes:
        cut = len(word) - len(suffix)
        if cut >= 1 and word.endswith(suffix) and word[cut - 1] != "'":
            return word[:cut], suffix
    return word, ""


def _split_fused(word: str) -> list[str]:
    if not _has_fused_hint(word):
        return [word]
    spaced = _FUSED.sub(lambda m: " " + " ".join(g for g in m.groups() if g) + " ", word)
    return spaced.split()

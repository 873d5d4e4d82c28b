"""Sentence splitting without nltk's downloadable Punkt model.

IFEval counts sentences with nltk's pretrained English Punkt tokenizer, whose
parameters (abbreviations, collocations, orthographic statistics) are a data
download. This splitter follows Punkt's decision rules with a fixed list of
abbreviations and of common sentence-initial words in place of the learned
statistics; the plugin README lists where the two can differ.

A sentence ends after a whitespace-delimited token ending in ``.``, ``?`` or
``!`` (closing quotes and brackets after it allowed) when another token
follows, except:

* after an abbreviation (``Dr.``, ``e.g.``, ``U.S.``), a single-letter initial
  (``J.``) or an ellipsis, only when the next token is a capitalised common
  sentence opener (``The``, ``It``, ...); an ellipsis also before any other
  capitalised token;
* after a number (``3.``), not when the next token starts lowercase.
"""

from __future__ import annotations

import itertools
import re

_TOKEN = re.compile(r"\S+")
_CLOSERS = "\"')]}*»”’"
_OPENERS = "\"'([{*«“‘`"
_NUMBER = re.compile(r"-?[.,]?\d[\d,.\-]*")
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # e.g, i.e, u.s, a.m, u.s.a (final period removed)

ABBREVIATIONS = frozenset(
    """
    mr mrs ms mx dr prof sr jr st mt rev hon gen col lt capt sgt cmdr gov sen rep pres
    vs etc al cf ca approx dept est govt inc ltd co corp bros assn univ
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
    fig figs eq eqs vol vols ch sec pp ed eds no nos op misc ft lb lbs oz hr hrs min mins
    """.split()
)
COMMON_OPENERS = frozenset(
    """
    a an the this that these those it its i we you he she they there here my our your his her their
    in on at by for from to with without into after before during while when where why how what who
    which if as so but and or yet then now also however finally first second third next last
    each every all some many most one two no not yes because since although though once
    let please note thanks thank overall today instead still even just only both either neither
    """.split()
)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, each from its first token to its last (empty text: none)."""
    tokens = list(_TOKEN.finditer(text))
    sentences = []
    start = 0
    for index in range(len(tokens) - 1):
        if ends_sentence(tokens[index].group(), tokens[index + 1].group()):
            sentences.append(text[tokens[start].start() : tokens[index].end()])
            start = index + 1
    if tokens:
        sentences.append(text[tokens[start].start() : tokens[-1].end()])
    return sentences


def count_sentences(text: str) -> int:
    """How many sentences ``text`` holds (0 for blank text)."""
    tokens = [match.group() for match in _TOKEN.finditer(text)]
    return sum(ends_sentence(a, b) for a, b in itertools.pairwise(tokens)) + (1 if tokens else 0)


def ends_sentence(token: str, next_token: str) -> bool:
    """Whether a sentence ends after ``token`` when ``next_token`` follows it."""
    core = token.rstrip(_CLOSERS)
    if not core:
        return False
    if core[-1] in "?!":
        return True
    if core[-1] != ".":
        return False
    upper, lower, opener = _first_letter_case(next_token)
    if core.endswith(".."):
        return upper
    stem = core[:-1].lstrip(_OPENERS)
    if _NUMBER.fullmatch(stem):
        return not lower
    if _is_abbreviation(stem):
        return upper and opener
    return True


def _is_abbreviation(stem: str) -> bool:
    if len(stem) == 1 and stem.isalpha():
        return True  # an initial
    low = stem.lower()
    return low in ABBREVIATIONS or _DOTTED.fullmatch(low) is not None


def _first_letter_case(token: str) -> tuple[bool, bool, bool]:
    """Whether ``token`` starts uppercase, starts lowercase, is a common sentence opener."""
    word = token.lstrip(_OPENERS)
    first = word[:1]
    core = word.rstrip(_CLOSERS + ".,;:?!").lower()
    return first.isupper(), first.islower(), core in COMMON_OPENERS

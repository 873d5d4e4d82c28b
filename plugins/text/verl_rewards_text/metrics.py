"""SQuAD's answer normalisation, exact match and token F1."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")  # literal words between boundaries: linear
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lowercase, drop ASCII punctuation, replace the articles a/an/the by spaces, collapse whitespace.

    The order and rules of SQuAD's evaluation script (and verl's ``search_r1_like_qa_em``).
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def exact_match(prediction: str, golds: Iterable[str]) -> float:
    """1.0 when the normalised prediction equals any normalised gold answer, else 0.0."""
    normalized = normalize_answer(prediction)
    return float(any(normalize_answer(gold) == normalized for gold in golds))


def token_f1(prediction: str, golds: Iterable[str]) -> float:
    """The best token F1 of the normalised prediction against any normalised gold answer."""
    predicted = normalize_answer(prediction).split()
    return max((_f1(predicted, normalize_answer(gold).split()) for gold in golds), default=0.0)


def _f1(predicted: list[str], gold: list[str]) -> float:
    if not predicted or not gold:  # SQuAD 2.0's rule: agreeing on "no answer" is a match
        return float(predicted == gold)
    common = sum((Counter(predicted) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)

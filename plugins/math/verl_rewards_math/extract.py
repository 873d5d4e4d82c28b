"""Which part of a response is its answer: ``boxed`` (the box only) or ``last_math`` (also without a box).

``boxed``: the last ``\\boxed{}`` (joined with the boxes just before it across
connectors, ``boxed.final_answer``); no box, no answer.

``last_math``: the same box when the response has one, so a box means the
same in both modes (a box that never closes is no answer in both). Without a
box, in order:

1. after the last final-answer phrase (``The final answer is``, ``Answer:``,
   ``answer is``): the math or number that directly follows it, else the last
   one in the rest of that sentence (``Final Answer: The largest $n$ is 34.``
   gives 34);
2. a response that is itself an answer (fewer than two words outside math
   and ``\\text{}``: ``\\frac{10}{9}``, ``10 weeks``, ``x = 1, y = 2``): all of it;
3. the last math (``$...$``, ``\\(...\\)`` on one line, ``$$...$$``, ``\\[...\\]``)
   or plain number (``2/3``, ``1,000.99``, ``100%``) of the response.

An answer read from math that chains equalities (``100 - 10 = 90``) is its
last side when the reference holds no ``=`` (``answer_side``).

Every scan here is one pass over the text (the response is hostile).
"""

from __future__ import annotations

import bisect
import re
from typing import Literal, NamedTuple

from .boxed import final_answer, strip_boxed

Extract = Literal["boxed", "last_math"]
EXTRACT_MODES: tuple[Extract, ...] = ("boxed", "last_math")
Source = Literal["box", "marker", "whole", "last"]

# Tokens that open or close math: "\\" first, so "\\[2pt]" (a line break) is not "\[".
_MATH_TOKEN = re.compile(r"\\\\|\\\$|\$\$|\$|\\\(|\\\)|\\\[|\\\]|\n")
_CLOSER = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}
_ONE_LINE = frozenset({"$", "\\("})
_NUMBER = re.compile(r"(?<![\w.\\^_])-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+)?(?:\s*%)?")
_MARKER = re.compile(
    r"\b(?:(?P<final>final\s+answers?)|answers?)\b(?:\s*\*\*)?\s*(?P<sep>is\b|are\b|:|=)?[\s*:]*",
    re.IGNORECASE,
)
_MAX_REST = 1000  # longer is no answer (math_boxed.MAX_BOX_CHARS)
_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z<])|\n|\.\s*$")
# A word of prose: two letters or more, not a connective ("$1$ and $2$" is a list).
_WORD = re.compile(r"(?<![\\a-zA-Z])(?!(?:and|or)(?![a-zA-Z]))[a-zA-Z]{2,}")
_TEXT_GROUP = re.compile(r"\\(?:text\w*|math\w+|mbox|operatorname|begin|end)\s*\{[^{}]*\}")
_COMMAND = re.compile(r"\\[a-zA-Z]+")
_RELATION_EQ = re.compile(r"[<>!]=|=[<>]|\\(?:le|ge|ne|leq|geq|neq|approx|equiv)(?![a-zA-Z])")


class Found(NamedTuple):
    """An answer and where in the response it was read."""

    text: str
    source: Source


def response_answer(text: str, mode: Extract) -> Found | None:
    """The answer ``text`` gives under ``mode``, or None when it gives none."""
    box = final_answer(text)
    if box is not None:
        return Found(box, "box")
    if mode == "boxed" or "\\boxed" in text or "\\fbox" in text:
        return None  # no box, or one whose braces never close (a cut-off response)
    return _unboxed_answer(text)


def reference_answer(text: str, mode: Extract) -> str:
    """The reference's answer: its box when it has one (a full solution), else as written;
    with ``last_math`` a reference in prose is read like a response."""
    if mode == "boxed" or final_answer(text) is not None:
        return strip_boxed(text)
    found = _unboxed_answer(text)
    return text if found is None or found.source == "whole" else found.text


def answer_side(pred: Found, reference: str) -> str:
    """The predicted answer to compare: math read without a box that chains equalities
    (``\\frac{1}{2}\\$ = \\frac{10}{9}``, ``100 - 10 = 90``) gives its last side when the
    reference holds no ``=``."""
    if pred.source in ("box", "whole") or _equals_at(reference):
        return pred.text
    cuts = _equals_at(pred.text)
    return pred.text[cuts[-1] + 1 :].strip() if cuts else pred.text


def _equals_at(text: str) -> list[int]:
    """Where ``text`` has an ``=`` outside brackets that is not part of ``<=``, ``\\ne``, ..."""
    masked = _RELATION_EQ.sub(lambda m: "#" * len(m.group()), text)
    depth, found = 0, []
    for i, char in enumerate(masked):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "=" and depth == 0:
            found.append(i)
    return found


class _Reading(NamedTuple):
    """One pass over a response: its math, its candidate answers, its words, its sentence ends."""

    spans: list[tuple[int, int, str]]
    candidates: list[tuple[int, int, str]]
    starts: list[int]  # of the candidates
    words: list[int]  # where each word of prose starts (outside math, ``\\text{}``, commands)
    ends: list[int]  # sentence ends outside math


def _read(text: str) -> _Reading:
    spans = math_spans(text)
    candidates = _candidates(text, spans)
    chars = list(text)
    for start, stop, _ in spans:
        chars[start:stop] = " " * (stop - start)
    masked = "".join(chars)
    masked = _COMMAND.sub(_blank, _TEXT_GROUP.sub(_blank, masked))
    words = [word.start() for word in _WORD.finditer(masked)]
    ends = [end.start() for end in _SENTENCE_END.finditer(masked)]
    return _Reading(spans, candidates, [c[0] for c in candidates], words, ends)


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _unboxed_answer(text: str) -> Found | None:
    reading = _read(text)
    marked = _after_marker(text, reading)
    if marked is not None:
        return Found(marked, "marker")
    if text.strip() and len(reading.words) < 2:
        return Found(text.strip(), "whole")
    return Found(reading.candidates[-1][2], "last") if reading.candidates else None


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """The math of ``text``, in order: (start, end, content) of each ``$..$``, ``\\(..\\)`` (one
    line each), ``$$..$$`` and ``\\[..\\]``; an escaped ``\\$`` is text."""
    spans: list[tuple[int, int, str]] = []
    opened: tuple[str, int, int] | None = None  # opener, its start, where its content starts
    for match in _MATH_TOKEN.finditer(text):
        token = match.group()
        if opened is None:
            if token in _CLOSER:
                opened = (token, match.start(), match.end())
            continue
        opener, start, content = opened
        if token == "\n" and opener in _ONE_LINE:
            opened = None  # an inline formula never spans lines: that "$" was not math
        elif token == _CLOSER[opener] or (opener == "$" and token == "$$"):
            spans.append((start, match.start() + len(_CLOSER[opener]), text[content : match.start()]))
            # "$a$$b$": the second "$" of "$$" opens the next formula
            opened = ("$", match.start() + 1, match.end()) if token == "$$" and opener == "$" else None
    return spans


def _candidates(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The non-empty math spans and the plain numbers outside them, in order: (start, end, text)."""
    found: list[tuple[int, int, str]] = []
    position = 0
    for start, stop, content in [*spans, (len(text), len(text), "")]:
        found += [(m.start(), m.end(), m.group().rstrip(",")) for m in _NUMBER.finditer(text, position, start)]
        if content.strip():
            found.append((start, stop, content.strip()))
        position = stop
    return found


def _after_marker(text: str, reading: _Reading) -> str | None:
    """The answer after the last final-answer phrase (outside math) that gives one: the rest of
    its sentence when that is an answer (fewer than two words), else the math or number right
    after the phrase, else (after ``final answer``, ``answer is``, ``answer:``) the last math or
    number of the sentence."""
    starts, answer = reading.starts, None
    for marker in _MARKER.finditer(text):
        at = bisect.bisect_left(reading.spans, (marker.start(),))
        if at and reading.spans[at - 1][1] > marker.start():
            continue  # "answer" inside a formula
        end = bisect.bisect_left(reading.ends, marker.end())
        stop = reading.ends[end] if end < len(reading.ends) else len(text)
        first = bisect.bisect_left(starts, marker.end())
        direct = first < len(starts) and starts[first] == marker.end()
        if not (direct or marker.group("final") or marker.group("sep")):
            continue
        words = bisect.bisect_left(reading.words, stop) - bisect.bisect_left(reading.words, marker.end())
        last = bisect.bisect_left(starts, stop) - 1
        whole = last > first and words < 2 and stop - marker.end() <= _MAX_REST
        if whole:
            answer = text[marker.end() : stop].strip()  # "The answers are 5, 6.", "is 5 apples."
        elif direct:
            answer = reading.candidates[first][2]
        elif last >= first:
            answer = reading.candidates[last][2]
        # else "..., I hope the answer is correct." after the answer: the earlier answer stands
    return answer

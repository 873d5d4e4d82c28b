"""Counting what IFEval counts in a response, each in one linear pass.

IFEval checks responses with regular expressions such as ``^\\s*\\*[^\\*].*$``
or ``<<[^\\n]+>>`` under ``re.findall``; on hostile text (a megabyte of
newlines, of ``[`` or of ``<<`` on one line) Python's backtracking makes those
quadratic. Each function here returns what that ``findall`` returns (or the
count it feeds), by a scan that visits every character a bounded number of
times.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_NON_SPACE = re.compile(r"\S")  # \s and str.isspace() agree: both are Py_UNICODE_ISSPACE
_WORD = re.compile(r"\w+")


def count_words(text: str) -> int:
    """Runs of word characters (IFEval counts words with ``RegexpTokenizer(r"\\w+")``)."""
    return sum(1 for _ in _WORD.finditer(text))


def count_placeholders(text: str) -> int:
    """Matches of ``\\[.*?\\]``: a ``[`` and the nearest ``]`` after it on the same line."""
    count = 0
    for line in text.split("\n"):
        pos = 0
        while (start := line.find("[", pos)) >= 0:
            end = line.find("]", start + 1)
            if end < 0:
                break  # no later "[" on this line has a "]" after it either
            count += 1
            pos = end + 1
    return count


def count_bullets(text: str) -> int:
    """IFEval's bullet count: lines starting ``*`` (not ``**``) plus lines starting ``-``.

    The same as ``len(findall(r"^\\s*\\*[^\\*].*$", M)) + len(findall(r"^\\s*-.*$", M))``,
    quirks included: the leading ``\\s*`` reaches across blank lines, and a lone
    ``*`` at the end of a line takes the next line as its text.
    """
    return _count_line_items(text, "*") + _count_line_items(text, "-")


def _count_line_items(text: str, marker: str) -> int:
    count = 0
    pos = 0
    for start in _line_starts(text):
        if start < pos:
            continue
        first = _NON_SPACE.search(text, start)
        if first is None:
            break
        at = first.start()
        after = at + 1
        matched = text[at] == marker and (
            marker == "-" or (after < len(text) and text[after] != "*")
        )
        if not matched:
            pos = at + 1  # every line start in this blank run reaches the same `at`
            continue
        count += 1
        # `.*` runs to the end of the line holding the character after the marker
        # (for "*", the character after the one `[^\*]` took).
        rest = after + (1 if marker == "*" else 0)
        newline = text.find("\n", rest)
        pos = len(text) + 1 if newline < 0 else newline
    return count


def _line_starts(text: str) -> Iterator[int]:
    yield 0
    pos = text.find("\n")
    while pos >= 0:
        yield pos + 1
        pos = text.find("\n", pos + 1)


def highlights(text: str) -> Iterator[str]:
    """The text inside each ``*x*`` and each ``**x**`` on one line, as IFEval finds them.

    ``findall(r"\\*[^\\n\\*]*\\*")`` and ``findall(r"\\*\\*[^\\n\\*]*\\*\\*")``, each
    scanning left to right without overlaps.
    """
    yield from _delimited(text, "*")
    yield from _delimited(text, "**")


def _delimited(text: str, mark: str) -> Iterator[str]:
    for line in text.split("\n"):  # a match never crosses a newline
        pos = 0
        while (start := line.find(mark, pos)) >= 0:
            inner = start + len(mark)
            stop = line.find("*", inner)
            if stop < 0:
                break  # no later mark on this line closes either
            if line.startswith(mark, stop):
                yield line[inner:stop]
                pos = stop + len(mark)
            else:
                # A failed start leaves no star before `stop` but one right after it ("***x").
                pos = start + 1 if stop == inner else stop


def titles(text: str) -> Iterator[str]:
    """Each ``<<...>>`` title as ``findall(r"<<[^\\n]+>>")`` finds them.

    On a line, a match runs from the first ``<<`` to the last ``>>`` that leaves
    at least one character between them; after it the line holds no other.
    """
    for line in text.split("\n"):
        start = line.find("<<")
        if start < 0:
            continue
        end = line.rfind(">>", start + 3)
        if end >= 0:
            yield line[start : end + 2]


def split_paragraph_dividers(text: str) -> list[str]:
    """``re.split(r"\\s?\\*\\*\\*\\s?", text)``: split at ``***`` with one optional space each side."""
    pieces = []
    pos = 0  # where the current piece starts
    search = 0
    while (star := text.find("***", search)) >= 0:
        start = star - 1 if star - 1 >= pos and text[star - 1].isspace() else star
        end = star + 3
        if end < len(text) and text[end].isspace():
            end += 1
        pieces.append(text[pos:start])
        pos = search = end
    pieces.append(text[pos:])
    return pieces


def count_sections(text: str, splitter: str) -> int:
    """Matches of ``\\s?SPLITTER\\s?\\d+\\s?`` (IFEval counts sections as these, minus nothing).

    ``splitter`` is literal text here; IFEval reads it as a regular expression
    (every splitter in its data is a plain word).
    """
    pattern = re.compile(r"\s?" + re.escape(splitter) + r"\s?\d+\s?")
    return sum(1 for _ in pattern.finditer(text))


def count_literal(text: str, phrase: str, *, whole_word: bool = False) -> int:
    """Non-overlapping case-insensitive occurrences of ``phrase`` (literal, not a regex)."""
    return sum(1 for _ in _literal_pattern(phrase, whole_word).finditer(text))


def contains_literal(text: str, phrase: str, *, whole_word: bool = False) -> bool:
    """Whether ``phrase`` occurs, ignoring case (``\\b`` at both ends with ``whole_word``)."""
    return _literal_pattern(phrase, whole_word).search(text) is not None


def _literal_pattern(phrase: str, whole_word: bool) -> re.Pattern[str]:
    # A literal pattern costs at most len(phrase) steps per position of the response.
    body = re.escape(phrase)
    return re.compile(rf"\b{body}\b" if whole_word else body, re.IGNORECASE)

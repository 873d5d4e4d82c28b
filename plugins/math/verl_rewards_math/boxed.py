"""Extract the final ``\\boxed{...}`` (or ``\\fbox{...}``) answer from LaTeX text."""

from __future__ import annotations

import re

_COMMANDS = ("\\boxed", "\\fbox")
_BARE_END = re.compile(r"[\s$]")


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed``/``\\fbox`` in ``text``.

    Nested braces are matched (``\\boxed{\\frac{1}{2}}``), escaped braces are
    skipped (``\\boxed{\\{1, 2\\}}``), and the brace-less form ``\\boxed 5``
    reads up to the next blank or ``$``. None when there is no box or its
    braces never close (a cut-off response).
    """
    start, command = max((text.rfind(c), c) for c in _COMMANDS)
    if start < 0:
        return None
    rest = text[start + len(command) :]
    if not rest.lstrip().startswith("{"):
        if not rest[:1].isspace():
            return None  # e.g. \boxedsomething: not this command
        bare = _BARE_END.split(rest.lstrip(), maxsplit=1)[0]
        return bare or None
    open_at = rest.index("{")
    close = closing_brace(rest, open_at)
    return None if close is None else rest[open_at + 1 : close]


def closing_brace(text: str, open_at: int) -> int | None:
    """The index of the ``}`` closing the ``{`` at ``open_at``, or None when it never closes.

    Nested groups are matched and escaped characters (``\\{``, ``\\}``) skipped.
    """
    depth = 0
    i = open_at
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def strip_boxed(answer: str) -> str:
    """A reference answer without its box, when it has one (e.g. a full MATH solution)."""
    inner = last_boxed(answer)
    return answer if inner is None else inner

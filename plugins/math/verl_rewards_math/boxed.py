"""Extract the final ``\\boxed{...}`` (or ``\\fbox{...}``) answer from LaTeX text."""

from __future__ import annotations

import re

_COMMANDS = ("\\boxed", "\\fbox")
_BARE_END = re.compile(r"[\s$]")
_BOX_START = re.compile(r"\\(?:boxed|fbox)\s*\{")
# What may stand between two boxes of one answer ("\boxed{1}, \boxed{2}",
# "$\boxed{(2,2)}$ and $\boxed{(6,2)}$", "\boxed{k=45} \quad\text{and}\quad \boxed{n=2}",
# "$y_1 = \boxed{..}$ and $y_2 = \boxed{..}$"): math delimiters, spacing, commas,
# "and"/"or", and a name with "=". Anything else (a sentence) separates a
# corrected answer from an earlier one, and only the last box counts.
_CONNECTOR = re.compile(
    r"(?:\s|\$|\\[()\[\]]|\\q?quad|\\[,;:! ]|~|[,;.&]|\\\\|\\text\s*\{[^{}$]*\}"
    r"|\band\b|\bor\b|[a-zA-Z](?:_\{?\w+\}?)?\s*=)*"
)


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


def boxes(text: str) -> list[tuple[int, int, str]]:
    """Every complete ``\\boxed{...}``/``\\fbox{...}`` that is not inside another: (start, end, content)."""
    found: list[tuple[int, int, str]] = []
    position = 0
    while (match := _BOX_START.search(text, position)) is not None:
        open_at = match.end() - 1
        close = closing_brace(text, open_at)
        if close is None:
            break
        found.append((match.start(), close + 1, text[open_at + 1 : close]))
        position = close + 1
    return found


def final_answer(text: str) -> str | None:
    """The answer a response gives: its last box, joined with the boxes just before
    it when only connectors separate them (``\\boxed{1}, \\boxed{2}`` -> ``1, 2``).

    None when there is no complete box.
    """
    last = last_boxed(text)
    if last is None:
        return None
    found = boxes(text)
    if not found or found[-1][2] != last or text[found[-1][1] :].find("\\boxed") >= 0:
        return last
    parts = [found[-1]]  # from the last box back (appended: inserting at the front is quadratic)
    for box in reversed(found[:-1]):
        gap = text[box[1] : parts[-1][0]]
        if _CONNECTOR.fullmatch(gap) is None:
            break
        parts.append(box)
    return ", ".join(part[2] for part in reversed(parts))


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
    """A reference answer without its box (or boxes), when it has one (e.g. a full MATH solution)."""
    inner = final_answer(answer)
    return answer if inner is None else inner

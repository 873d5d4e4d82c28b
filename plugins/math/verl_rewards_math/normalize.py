"""Normalise a LaTeX answer to a canonical string, in the spirit of the MATH
benchmark's ``strip_string`` and Minerva's ``normalize_final_answer``.

The result has no spaces, no ``$``, no ``\\left``/``\\right``, no degree or
percent signs, no units after a number, ``\\frac`` for ``\\dfrac``/``\\tfrac``
and ``a/b``, braces around ``\\frac12`` and ``\\sqrt2``, and no trailing period.
"""

from __future__ import annotations

import re

UNITS = frozenset(
    """
    unit units degree degrees radian radians cm centimeter centimeters centimetre centimetres
    m meter meters metre metres km kilometer kilometers mm inch inches in ft foot feet yard
    yards mile miles mph kg g gram grams pound pounds lb lbs ounce ounces oz second seconds sec
    s minute minutes min hour hours hr hrs day days week weeks month months year years dollar
    dollars cent cents point points square sq cubic liter liters litre litres ml people
    students ways integers digits edges sides times percent
    """.split()
)

_DELIMITERS = ((r"\(", r"\)"), (r"\[", r"\]"), ("$$", "$$"), ("$", "$"))
_SIZING = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])")
_SPACING = re.compile(r"\\(?:[,;:! ]|q?quad(?![a-zA-Z]))")
_DEGREES = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°")
_TEXT_CMD = r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|mbox|operatorname)"
_TEXT = re.compile(_TEXT_CMD + r"\s*\{([^{}]*)\}")
# A unit in text ending the answer ("\text{ cm}^2"). Searched for (it can only
# start at a backslash) rather than matched after a ".*" prefix, which
# backtracked quadratically on long answers.
_TEXT_UNIT = re.compile(_TEXT_CMD + r"\s*\{\s*[a-zA-Z][a-zA-Z ]*\}(?:\^\{?[23]\}?)?$")
_DIGIT = re.compile(r"\d")
_BARE_UNIT = re.compile(r"^(?P<value>.*\d\}?)\s*(?P<unit>[a-zA-Z]+)(?:\^\{?[23]\}?)?$")
_ASSIGNMENT = re.compile(r"^\s*[a-zA-Z](?:_\{?\w\}?)?\s*=(?!=)")
_MEMBERSHIP = re.compile(r"^\s*[a-zA-Z]\s*\\in(?![a-zA-Z])\s*")
_PLAIN_NUMBER = re.compile(r"^-?\d[\d,]*(?:\.\d+)?$")
_UNICODE = {
    "\u2212": "-",
    "\u221e": "\\infty",
    "\u03c0": "\\pi",
    "\u00d7": "\\times",
    "\u00b7": "\\cdot",
    "\u2264": "\\le",
    "\u2265": "\\ge",
}
_CHOICE = re.compile(r"^\(?([A-E])\)?$")
_THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_A_SLASH_B = re.compile(r"^(-?\d+)/(\d+)$")


def normalize(answer: str) -> str:
    """The canonical form of ``answer`` used for string comparison."""
    s = _strip_delimiters(answer.strip())
    for char, latex in _UNICODE.items():
        s = s.replace(char, latex)
    s = s.replace("\n", " ").replace("\\\\", " ").replace("\\displaystyle", "")
    s = _SIZING.sub("", s)
    s = _SPACING.sub(" ", s)
    s = re.sub(r"\\[dt]frac", r"\\frac", s)
    s = _DEGREES.sub("", s)
    s = s.replace("\\%", "").replace("%", "").replace("\\$", "").replace("$", "")
    s = _strip_units(s.strip())
    s = _TEXT.sub(r"\1", s)
    s = _strip_assignment(s)
    s = s.replace(" ", "").rstrip(".")
    s = _fix_braces(s)
    return _canonical_number(s)


def _strip_delimiters(s: str) -> str:
    for left, right in _DELIMITERS:
        if s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right):
            return s[len(left) : len(s) - len(right)].strip()
    return s


def _strip_units(s: str) -> str:
    """``5\\text{ cm}^2`` and ``72 apples`` keep their number; a bare word must be a unit."""
    text_unit = _TEXT_UNIT.search(s)
    if text_unit and _DIGIT.search(s, 0, text_unit.start()):
        return s[: text_unit.start()].strip()
    bare = _BARE_UNIT.match(s)
    if bare is None:
        return s
    value, unit = bare.group("value").strip(), bare.group("unit")
    # After a plain number any word is a unit ("72 apples"); after an
    # expression only a known unit is, since "2 x" may be a product.
    if unit.lower() in UNITS or (len(unit) >= 3 and _PLAIN_NUMBER.match(value)):
        return value
    return s


def _strip_assignment(s: str) -> str:
    """``x = 5`` -> ``5``, ``x \\in [1, 2]`` -> ``[1, 2]``; left alone when there are
    several ``=`` (a system of equations)."""
    if s.count("=") == 1 and _ASSIGNMENT.match(s):
        return s.split("=", 1)[1]
    return _MEMBERSHIP.sub("", s, count=1)


def _fix_braces(s: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{2}``/``\\frac{1}2`` too, ``\\sqrt2`` -> ``\\sqrt{2}``."""
    s = re.sub(r"\\frac(\w)(\w)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac(\w)\{", r"\\frac{\1}{", s)
    s = re.sub(r"\\frac\{([^{}]*)\}(\w)", r"\\frac{\1}{\2}", s)
    return re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", s)


def _canonical_number(s: str) -> str:
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    if s.startswith("."):
        s = "0" + s
    elif s.startswith("-."):
        s = "-0" + s[1:]
    slash = _A_SLASH_B.match(s)
    if slash:
        return f"\\frac{{{slash.group(1)}}}{{{slash.group(2)}}}"
    choice = _CHOICE.match(s)
    return choice.group(1) if choice else s

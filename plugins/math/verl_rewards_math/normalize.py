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
    students ways integers digits edges sides times percent yuan
    """.split()
)

_DELIMITERS = ((r"\(", r"\)"), (r"\[", r"\]"), ("$$", "$$"), ("$", "$"))
_SIZING = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])")
_SPACING = re.compile(r"\\(?:[,;:! ]|q?quad(?![a-zA-Z]))")
_DEGREES = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°")
_TEXT_CMD = (
    r"\\(?:text|textbf|textit|textrm|textnormal|textsf|texttt|mathrm|mathbf|mathit|mathsf|mathtt"
    r"|mbox|operatorname|boldsymbol)"
)
_TEXT = re.compile(_TEXT_CMD + r"\s*\{([^{}]*)\}")
# A unit in text ending the answer ("\text{ cm}^2"). Searched for (it can only
# start at a backslash) rather than matched after a ".*" prefix, which
# backtracked quadratically on long answers.
_TEXT_UNIT = re.compile(_TEXT_CMD + r"\s*\{\s*[a-zA-Z][a-zA-Z ]*\}(?:\^\{?[23]\}?)?$")
_DIGIT = re.compile(r"\d")
_MERIDIEM = re.compile(r"\{\s*[ap]\.?m\.?\s*\}$", re.IGNORECASE)  # "4:30\text{ PM}": a time, no unit
_BARE_UNIT = re.compile(
    r"^(?P<value>.*\d\}?)(?P<space>\s*)(?P<unit>[a-zA-Z]+(?:\s+[a-zA-Z]+){0,2})(?:\^\{?[23]\}?)?$"
)
# A name on the left of "=": x, x_1, x_{12}, f(x), AB, |AB|, A:B, (p, q), m\angle A.
_ASSIGNMENT = re.compile(
    r"^\s*(?:[a-zA-Z](?:_\{?\w+\}?)?'?(?:\([a-z](?:,\s*[a-z])*\))?|[A-Z]{1,3}|\|[A-Z]{1,3}\||[A-Z]\s*:\s*[A-Z]"
    r"|\(\s*[a-z](?:\s*,\s*[a-z])+\s*\)|(?:m\s*)?\\angle\s*[A-Z]{1,3})\s*=(?!=)"
)
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
    "\u2260": "\\neq",
}
# One spelling per relation: "\geq", "\geqslant", ">=" -> "\ge"; "!=", "\ne" -> "\neq"; "\lt" -> "<".
_RELATIONS = (
    (re.compile(r"\\(?:geqslant|geq|ge)(?![a-zA-Z])|>="), "\\ge"),
    (re.compile(r"\\(?:leqslant|leq|le)(?![a-zA-Z])|<="), "\\le"),
    (re.compile(r"\\(?:neq|ne)(?![a-zA-Z])|!=|\\not\s*="), "\\neq"),
    (re.compile(r"\\gt(?![a-zA-Z])"), ">"),
    (re.compile(r"\\lt(?![a-zA-Z])"), "<"),
)
_CHOICE = re.compile(r"^\(?([A-E])\)?(?:[.:]\S*)?$")
_DOUBLED_ESCAPE = re.compile(r"\\\\(?=[a-zA-Z])")
_CONNECTIVES = re.compile(r"\\text\s*\{\s*(?:and|or)\s*\}|(?<![a-zA-Z\\])(?:and|or)(?![a-zA-Z])")
_SPACE_THOUSANDS = re.compile(r"^-?\d{1,3}(?: \d{3})+(?:\.\d+)?$")
_MIXED = re.compile(r"^(-?)(\d+)\s*(?:\\frac\{(\d+)\}\{(\d+)\}|\\frac(\d)(\d)|\s(\d+)/(\d+))$")
_DIGIT_SPACE_DIGIT = re.compile(r"(?<=[\d}])\s+(?=\d)")
_PERCENT_WORD = re.compile(r"\s*(?:percent(?:age)?|pct)\.?$")
_SUBSCRIPT = re.compile(r"_\{(\w)\}")
_ENVIRONMENT = re.compile(
    r"\\begin\{(?P<kind>[pbBvV]?matrix|smallmatrix|array|cases)\}(?:\{[^{}]*\})?(?P<body>.*?)\\end\{(?P=kind)\}",
    re.S,
)
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?((?:a|p)\.?m\.?)?$", re.IGNORECASE)
# A leading group of 0 is no thousands group: "0,111" is not 111 (it is a list, or a decimal comma).
_THOUSANDS = re.compile(r"^-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$")
_A_SLASH_B = re.compile(r"^(-?\d+)/(\d+)$")


def is_percent(answer: str) -> bool:
    """Whether ``answer`` is written as a percentage (``10\\%``, ``10%``, ``10 percent``)."""
    return "%" in answer or _PERCENT_WORD.search(answer) is not None


def normalize(answer: str) -> str:
    """The canonical form of ``answer`` used for string comparison."""
    s = _strip_delimiters(answer.strip())
    if "\\begin" in s:
        s = _ENVIRONMENT.sub(_environment_as_list, _DOUBLED_ESCAPE.sub("\\\\", s))
    for char, latex in _UNICODE.items():
        s = s.replace(char, latex)
    # "\\frac" (an escape doubled by a JSON or Python round trip) is "\frac"; other "\\" break lines.
    s = _DOUBLED_ESCAPE.sub("\\\\", s)
    s = s.replace("\n", " ").replace("\\\\", " ").replace("\\displaystyle", "")
    # "{,}" and ",\!" are how LaTeX writes a thousands separator: "14{,}916", "11,\!111".
    s = re.sub(r"\{,\}|,\\!\s*", ",", s)
    s = s.split("\\approx")[0].rstrip("\\ ")
    s = _SIZING.sub("", s)
    for relation, spelling in _RELATIONS:
        s = relation.sub(lambda _m, spelling=spelling: spelling, s)
    s = _SPACING.sub(" ", s)
    s = re.sub(r"\\[dtc]frac", r"\\frac", s)
    s = _DEGREES.sub("", s)
    s = _PERCENT_WORD.sub("", s)
    s = s.replace("\\%", "").replace("%", "").replace("\\$", "").replace("$", "")
    s = _strip_units(s.strip())
    s = _TEXT.sub(r"\1", s)
    s = _CONNECTIVES.sub(",", s)
    s = _strip_assignment(s.strip())
    s = _whole_number_spacing(s.strip())
    s = re.sub(r",(?:\s*,)+", ",", s.replace(" ", "")).strip(",").rstrip(".")
    s = _SUBSCRIPT.sub(r"_\1", _fix_braces(s))
    return _canonical_number(s)


def _environment_as_list(match: re.Match[str]) -> str:
    """A matrix as rows of items (``[[1,2],[3,4]]``; one row or column: ``[1,2]``);
    ``cases`` as a set of its lines."""
    rows = [row for row in re.split(r"(?:\\\\){1,2}(?:\[[^\]]*\])?", match.group("body")) if row.strip()]
    if match.group("kind") == "cases":
        return "\\{" + ",".join(row.split("&")[0] for row in rows) + "\\}"
    cells = [[cell.strip() for cell in row.split("&")] for row in rows]
    if len(cells) == 1 or all(len(row) == 1 for row in cells):
        return "[" + ",".join(cell for row in cells for cell in row) + "]"
    return "[" + ",".join("[" + ",".join(row) + "]" for row in cells) + "]"


def _whole_number_spacing(s: str) -> str:
    """``1 000`` -> ``1000``, ``2\\frac58`` and ``1 1/2`` -> improper fractions, and a
    space between digits elsewhere is a product (``2^6 3^5`` -> ``2^6*3^5``)."""
    if _SPACE_THOUSANDS.match(s):
        return s.replace(" ", "")
    if _THOUSANDS.match(s):  # "1,000" but not "32, 349" (a list)
        return s.replace(",", "")
    mixed = _MIXED.match(s)
    if mixed:
        sign, whole, *fraction = mixed.groups()
        num, den = (int(x) for x in fraction if x is not None)
        if 0 < num < den:
            return f"{sign}\\frac{{{int(whole) * den + num}}}{{{den}}}"
    return _DIGIT_SPACE_DIGIT.sub("*", s)


def _strip_delimiters(s: str) -> str:
    for left, right in _DELIMITERS:
        if s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right):
            return s[len(left) : len(s) - len(right)].strip()
    return s


def _strip_units(s: str) -> str:
    """``5\\text{ cm}^2`` and ``72 apples`` keep their number; a bare word must be a unit."""
    text_unit = _TEXT_UNIT.search(s)
    clock = _MERIDIEM.search(text_unit.group()) and ":" in s[: text_unit.start()] if text_unit else False
    if text_unit and _DIGIT.search(s, 0, text_unit.start()) and not clock:
        return s[: text_unit.start()].strip()
    bare = _BARE_UNIT.match(s)
    if bare is None:
        return s
    value, unit = bare.group("value").strip(), bare.group("unit")
    words = unit.lower().split()
    # After a plain number any word is a unit ("72 apples"); after an
    # expression only a known unit is, since "2 x" may be a product. A short
    # unit needs a space: "10m" may be 10 m, or 10 times m.
    if len(unit) < 3 and not bare.group("space"):
        return s
    if all(word in UNITS for word in words) or (len(unit) >= 3 and _PLAIN_NUMBER.match(value)):
        return value
    return s


def _strip_assignment(s: str) -> str:
    """``x = 5`` -> ``5``, ``f(x) = 2x+3`` -> ``2x+3``, ``x \\in [1, 2]`` -> ``[1, 2]``;
    in a list, each item (``x = 1, y = 2`` -> ``1,2``). Left alone when an item
    holds several ``=`` (a system of equations) or the left side is not a name."""
    if s.count("=") == 1 and _ASSIGNMENT.match(s):
        return s.split("=", 1)[1]
    groups = [split_top_level(group, ",") for group in split_top_level(s, ";")]
    if len(groups) > 1 and all(len(g) > 1 and all(_named(item) for item in g) for g in groups):
        # "p=5,q=2;p=7,q=2": one named solution per group, as tuples "(5,2),(7,2)".
        return ",".join("(" + ",".join(item.split("=", 1)[1] for item in g) + ")" for g in groups)
    items = split_top_level(s, ",;")
    named = [_named(item) for item in items]
    if len(items) > 1 and any(named) and all(ok or "=" not in item for ok, item in zip(named, items)):
        return ",".join(item.split("=", 1)[1] if ok else item for ok, item in zip(named, items))
    return _MEMBERSHIP.sub("", s, count=1)


def _named(item: str) -> bool:
    return item.count("=") == 1 and _ASSIGNMENT.match(item) is not None


def split_top_level(s: str, separators: str) -> list[str]:
    """``s`` split at the ``separators`` that are outside brackets and braces."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(s):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char in separators and depth == 0:
            items.append(s[start:i])
            start = i + 1
    items.append(s[start:])
    return items


def _fix_braces(s: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{2}``/``\\frac{1}2`` too, ``\\sqrt2`` -> ``\\sqrt{2}``."""
    s = re.sub(r"\\frac(\w)(\w)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac(\w)\{", r"\\frac{\1}{", s)
    s = re.sub(r"\\frac\{([^{}]*)\}(\w)", r"\\frac{\1}{\2}", s)
    return re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", s)


def _canonical_number(s: str) -> str:
    clock = _CLOCK.match(s)
    if clock:
        hours, minutes, seconds, half = clock.groups()
        hour = int(hours) % 12 + (12 if half and half[0].lower() == "p" else 0) if half else int(hours)
        return f"{hour:02d}:{minutes}:{seconds or '00'}"
    if s.startswith("."):
        s = "0" + s
    elif s.startswith("-."):
        s = "-0" + s[1:]
    slash = _A_SLASH_B.match(s)
    if slash:
        return f"\\frac{{{slash.group(1)}}}{{{slash.group(2)}}}"
    choice = _CHOICE.match(s)
    return choice.group(1) if choice else s

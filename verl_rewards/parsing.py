"""Small parsers plugins share: the last tagged block of model output, a mapping from JSON
text, a JSON value of one kind, and NumPy/pandas/torch values as Python's own (:func:`as_python`).

Model output is hostile, so the scan here takes linear time where the regex it
stands for takes quadratic time. The parsers raise nothing but ``ValueError``
(or the error class a caller names), so one bad sample fails only itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

_SCALARS = (str, bytes, bool, int, float, type(None))
_JSON_KINDS: dict[type, str] = {dict: "object", list: "list", str: "string"}


def last_block(text: str, open_tag: str, close_tag: str) -> str | None:
    """The content of the last ``open_tag ... close_tag`` block of ``text``, or None without one.

    The blocks are those ``re.finditer(re.escape(open_tag) + "(.*?)" + re.escape(close_tag),
    text, re.DOTALL)`` finds: left to right, each ending at the first close tag after its
    open tag, the next searched after that close tag; the content is not stripped. The regex
    takes quadratic time on many unclosed open tags (8,000 of them, 64 kB: 10 s); this scan
    is linear. Empty tags are a ``ValueError``.
    """
    if not open_tag or not close_tag:
        raise ValueError(f"tags must be non-empty, not {open_tag!r} and {close_tag!r}")
    block = None
    position = 0
    while (start := text.find(open_tag, position)) >= 0:
        end = text.find(close_tag, start + len(open_tag))
        if end < 0:  # no later open tag can be closed either
            break
        block = (start + len(open_tag), end)
        position = end + len(close_tag)
    return None if block is None else text[block[0] : block[1]]


def json_mapping(
    value: object, what: str, expected: str, error: type[ValueError] = ValueError
) -> Mapping[str, Any]:
    """``value`` when it is a mapping; parsed when it is JSON text (``str`` or ``bytes``).

    Anything else, JSON that does not parse, or JSON that is not an object raises
    ``error`` (a ``ValueError`` subclass, so a caller's own error type stays), worded
    ``"{what} is not valid JSON: ..."`` or ``"{what} must be {expected} (or its JSON
    text), not {type}"``; ``what`` names the value (``"ground truth"``), ``expected``
    says what it should be (``"a mapping with 'inputs' and 'outputs' lists"``).
    """
    if isinstance(value, (str, bytes)):
        value = _loads(value, error, lambda e: f"{what} is not valid JSON: {e}")
    if not isinstance(value, Mapping):
        raise error(f"{what} must be {expected} (or its JSON text), not {type(value).__name__}")
    return value


def json_value(text: str, what: str, kind: type, error: Callable[[str], Exception] = ValueError) -> Any:
    """``text`` parsed as JSON whose value is a ``kind`` (``dict``, ``list``, ``str``; ``object``: any).

    Text that does not parse raises ``error`` worded ``"{what} is not valid JSON (...):
    {text}"``; another kind of value, ``"{what} must be a JSON {object|list|string}, not
    {text}"`` (``what`` names the value: an environment variable, say).
    """
    value = _loads(text, error, lambda e: f"{what} is not valid JSON ({e}): {text!r:.200}")
    if not isinstance(value, kind):
        raise error(f"{what} must be a JSON {_JSON_KINDS.get(kind, kind.__name__)}, not {text!r:.200}")
    return value


def _loads(text: str | bytes, error: Callable[[str], Exception], message: Callable[[Exception], str]) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # RecursionError: nesting deeper than the stack
        raise error(message(e)) from e


def as_python(value: Any) -> Any:
    """``value`` with NumPy, pandas and torch values made Python's own, through dicts,
    mappings (made dicts), lists and tuples: an array, a series or a tensor becomes a
    list (``tolist()``), a NumPy scalar or 0-d array a number. Everything else is kept as
    it is: a reward reading a parquet row through pandas sees lists and numbers, without
    importing NumPy."""
    if isinstance(value, _SCALARS):  # most of a row: checked first, it is the hot path
        return value
    if isinstance(value, list):
        return [as_python(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_python(v) for v in value)
    if isinstance(value, Mapping):
        return {k: as_python(v) for k, v in value.items()}
    tolist = getattr(value, "tolist", None)  # NumPy, pandas, torch: without importing them
    return as_python(tolist()) if callable(tolist) else value

"""The length of a response: in tokens when the trainer says, else in characters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Unit = Literal["auto", "tokens", "chars"]
UNITS: tuple[Unit, ...] = ("auto", "tokens", "chars")

# Keys of extra_info holding the response's token count, first match wins.
# verl's DAPO manager calls it valid_response_length.
TOKEN_KEYS = ("response_length", "num_tokens", "valid_response_length")


def response_length(
    solution_str: str, extra_info: Mapping[str, Any] | None, unit: Unit = "auto"
) -> tuple[int, str]:
    """``(length, "tokens" | "chars")``.

    ``auto`` uses the first of ``TOKEN_KEYS`` present in ``extra_info`` and
    falls back to ``len(solution_str)``; ``tokens`` requires a key;
    ``chars`` ignores them.
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, not {unit!r}")
    if unit != "chars":
        tokens = token_count(extra_info)
        if tokens is not None:
            return tokens, "tokens"
        if unit == "tokens":
            raise ValueError(f"unit='tokens' needs one of {list(TOKEN_KEYS)} in extra_info")
    return len(solution_str), "chars"


def token_count(extra_info: Mapping[str, Any] | None) -> int | None:
    """The token count from ``extra_info``, or None when it carries none."""
    if not extra_info:
        return None
    for key in TOKEN_KEYS:
        value = extra_info.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not hasattr(value, "__int__"):
            raise ValueError(f"extra_info[{key!r}] must be a number of tokens, not {value!r}")
        count = int(value)
        if count != value or count < 0:
            raise ValueError(f"extra_info[{key!r}] must be a non-negative integer, not {value!r}")
        return count
    return None

"""The length of a response: in tokens when the trainer says, else in characters."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, Literal

Unit = Literal["auto", "tokens", "chars"]
UNITS: tuple[Unit, ...] = ("auto", "tokens", "chars")

# Keys of extra_info holding the response's token count, first match wins.
# This project's trainer sets response_length; verl's reward managers pass the
# dataset's extra_info, which holds none of them unless the data adds one.
TOKEN_KEYS = ("response_length", "num_tokens", "valid_response_length")

logger = logging.getLogger("verl_rewards_format.length")
_warned_lock = threading.Lock()
_warned = False


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
        _warn_chars_once()
    return len(solution_str), "chars"


def _warn_chars_once() -> None:
    """Say once per process that ``auto`` measures characters: lengths set in tokens would be off."""
    global _warned
    with _warned_lock:
        if _warned:
            return
        _warned = True
    logger.warning(
        "unit='auto' found no token count in extra_info (keys %s): measuring responses in "
        "characters; set unit='chars' to silence this, or unit='tokens' to require token counts",
        ", ".join(TOKEN_KEYS),
    )


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

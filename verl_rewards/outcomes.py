"""What scoring one sample produced: a small record every layer shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

Status = Literal["ok", "failed", "timeout"]


class Outcome(NamedTuple):
    """What scoring one sample produced."""

    score: float | None  # None unless status == "ok"
    extra: Mapping[str, Any] | None
    error: str | None  # "Type: message"
    status: Status

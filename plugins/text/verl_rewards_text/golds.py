"""The gold answers a ground truth holds: a string, a list, JSON text of a list, or ``{"target": [...]}``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from verl_rewards.parsing import as_python


def gold_answers(ground_truth: Any) -> tuple[str, ...]:
    """Every gold answer in ``ground_truth``, as text.

    Accepted: a string (JSON text of a list, or of an object with ``"target"``,
    is read as that list); a list, tuple or array (NumPy arrays and pandas
    series, as parquet rows hold them); a mapping with ``"target"`` as verl's
    searchR1 data stores it (its target a string, list or array). Numbers
    count as their text. ``None``, an empty list and other values are errors.
    """
    value = _parsed_json(ground_truth) if isinstance(ground_truth, str) else ground_truth
    if isinstance(value, Mapping):
        if "target" not in value:
            raise ValueError(f"ground_truth mapping has no 'target' key (keys: {sorted(map(str, value))})")
        value = value["target"]
    if isinstance(value, str):
        return (value,)
    items = _items(value)
    if items is None:
        raise ValueError(
            f"ground_truth must be a gold answer, a list of them or {{'target': [...]}}, "
            f"not {type(ground_truth).__name__}"
        )
    if not items:
        raise ValueError("ground_truth holds no gold answer (an empty list)")
    return tuple(_text(item) for item in items)


def _parsed_json(text: str) -> Any:
    """``text`` itself, unless it is JSON text of a list or of an object with ``target``."""
    stripped = text.strip()
    if not stripped.startswith(("[", "{")):
        return text
    try:
        value = json.loads(stripped)
    except ValueError:
        return text
    if isinstance(value, list) or (isinstance(value, dict) and "target" in value):
        return value
    return text


def _items(value: Any) -> list[Any] | None:
    items = as_python(value)  # a NumPy array or pandas series as a list, a NumPy scalar a number
    if isinstance(items, (list, tuple)):
        return list(items)
    return [items] if items is not value and not isinstance(value, Mapping) else None


def _text(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        return str(item)
    raise ValueError(f"a gold answer must be text (or a number), not {type(item).__name__}: {item!r}")

"""The reasoning-gym entry a sample carries, and the task that scores it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.parsing import as_python, json_mapping

from .tasks import COMPOSITE, check_task

PREFIX = "reasoning_gym/"
TUPLE_BOARDS = frozenset({"arc_agi", "rearc"})


def entry_of(ground_truth: Any, extra_info: Mapping[str, Any] | None) -> dict[str, Any]:
    """The whole entry from ``extra_info["entry"]`` (a mapping or JSON text); without one,
    ``{"answer": ground_truth, "metadata": {}}`` (enough for tasks that compare answers only).

    Arrays (a parquet row's lists come back as NumPy arrays) become lists.
    """
    raw = (extra_info or {}).get("entry")
    if raw is None:
        return {"question": "", "answer": ground_truth, "metadata": {}}
    entry: dict[str, Any] = as_python(json_mapping(raw, "extra_info['entry']", "a reasoning-gym entry dict"))
    if "answer" not in entry:
        raise ValueError(f"extra_info['entry'] has no 'answer' (keys: {sorted(entry)})")
    return entry


def task_of(data_source: str, entry: Mapping[str, Any]) -> str:
    """The task: from ``data_source`` ``reasoning_gym/<task>``, else the entry's
    ``metadata.source_dataset``; both given and different is an error."""
    named = data_source[len(PREFIX):] if data_source.startswith(PREFIX) else None
    metadata = entry.get("metadata")
    source = metadata.get("source_dataset") if isinstance(metadata, Mapping) else None
    if named == COMPOSITE:
        named = None
    if named is not None and source is not None and named != source:
        raise ValueError(f"data_source {data_source!r} names task {named!r}, but the entry's "
                         f"metadata.source_dataset is {source!r}")
    task = named or source
    if not task:
        raise ValueError(f"no reasoning-gym task for data_source {data_source!r}: name it "
                         f"'{PREFIX}<task>' or put the entry, with its metadata.source_dataset, "
                         f"in extra_info['entry']")
    return check_task(str(task), data_source)


def restored(task: str, entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with the tuples its task compares against put back where JSON (or a parquet
    row) made them lists: ``arc_agi`` and ``rearc`` compare the parsed answer board, a tuple
    of tuples, with ``metadata["output"]``, so a list of lists there scores a right answer 0.05."""
    metadata = entry.get("metadata")
    if task not in TUPLE_BOARDS or not isinstance(metadata, dict) or not isinstance(metadata.get("output"), list):
        return entry
    board = tuple(tuple(row) if isinstance(row, list) else row for row in metadata["output"])
    return {**entry, "metadata": {**metadata, "output": board}}


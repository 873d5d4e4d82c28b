"""The prompt set: JSONL rows -> immutable records, drawn in seeded, shuffled epochs."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple


class DataError(Exception):
    """The prompt file is missing or has a malformed row."""


class PromptRecord(NamedTuple):
    """One prompt and what the reward needs to judge its completions."""

    row: int  # index among the file's prompts (blank lines are not prompts)
    prompt: str
    data_source: str
    ground_truth: Any
    extra_info: Mapping[str, Any]


def load_prompts(path: Path) -> list[PromptRecord]:
    """Read a JSONL file whose rows have ``prompt`` and ``ground_truth`` (the reward needs
    it, as ``verl-rewards score`` does), and optionally ``data_source`` and ``extra_info``."""
    try:
        # Not splitlines(): a JSON string may hold U+2028 and the like, which it
        # splits on. (Text mode has already turned "\r\n" into "\n".)
        lines = path.read_text(encoding="utf-8-sig").split("\n")
    except OSError as e:
        raise DataError(f"cannot read prompt file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise DataError(f"prompt file {path} is not UTF-8 text: {e}") from None
    records: list[PromptRecord] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            records.append(_record(len(records), line, f"{path}, line {number}"))
    if not records:
        raise DataError(f"prompt file {path} has no rows")
    return records


def _record(row: int, line: str, where: str) -> PromptRecord:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise DataError(f"{where}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as e:  # e.g. an integer past Python's digit limit
        raise DataError(f"{where}: unreadable JSON value: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        raise DataError(f"{where}: expected an object with a string 'prompt'")
    if "ground_truth" not in data:
        raise DataError(f"{where}: missing required field ground_truth (what the reward "
                        f"compares against; use \"\" for a reward that ignores it)")
    extra = data.get("extra_info") or {}
    if not isinstance(extra, dict):
        raise DataError(f"{where}: 'extra_info' must be an object")
    return PromptRecord(
        row=row,
        prompt=data["prompt"],
        data_source=str(data.get("data_source", "")),
        ground_truth=data.get("ground_truth"),
        extra_info=extra,
    )


def batches(records: Sequence[PromptRecord], size: int, seed: int) -> Iterator[list[PromptRecord]]:
    """Endless batches of ``size`` prompts: each epoch is a fresh seeded shuffle.

    A batch may straddle two epochs, so every batch is full even when ``size``
    does not divide the number of prompts.
    """
    rng = random.Random(seed)
    pending: list[PromptRecord] = []
    while True:
        while len(pending) < size:
            epoch = list(records)
            rng.shuffle(epoch)
            pending.extend(epoch)
        yield pending[:size]
        pending = pending[size:]

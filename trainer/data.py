"""The prompt set: JSONL or Parquet rows -> immutable records, drawn in seeded, shuffled epochs.

A row is read as ``verl-rewards score`` reads it (:mod:`verl_rewards.layout`), so a file
that scores also trains: flat rows (``prompt``, ``data_source``, ``ground_truth``,
``extra_info``) or verl's own layout (the ground truth in ``reward_model.ground_truth``,
the prompt as chat messages); a list of ``responses`` in it is ignored (the trainer
samples its own).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from verl_rewards.layout import fields
from verl_rewards.samples import normalise_prompt

PARQUET = (".parquet", ".pq")


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
    """Read a JSONL or Parquet file whose rows have a prompt (text, or chat messages) and a
    ground truth (the reward needs it, as ``verl-rewards score`` does: ``ground_truth``, or
    verl's ``reward_model.ground_truth``), and optionally ``data_source`` and ``extra_info``."""
    rows = _parquet_rows(path) if path.suffix.lower() in PARQUET else _jsonl_rows(path)
    records: list[PromptRecord] = []
    for data, where in rows:
        records.append(_record(len(records), data, where))
    if not records:
        raise DataError(f"prompt file {path} has no rows")
    return records


def _jsonl_rows(path: Path) -> Iterator[tuple[Any, str]]:
    try:
        # Not splitlines(): a JSON string may hold U+2028 and the like, which it
        # splits on. (Text mode has already turned "\r\n" into "\n".)
        lines = path.read_text(encoding="utf-8-sig").split("\n")
    except OSError as e:
        raise DataError(f"cannot read prompt file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise DataError(f"prompt file {path} is not UTF-8 text: {e}") from None
    for number, line in enumerate(lines, 1):
        if line.strip():
            where = f"{path}, line {number}"
            yield _parse(line, where), where


def _parquet_rows(path: Path) -> Iterable[tuple[Any, str]]:
    """The rows of a Parquet file, read by ``verl-rewards score``'s reader (``map``
    columns as dicts)."""
    from verl_rewards.cli.errors import InputError
    from verl_rewards.cli.rows_parquet import read_batches

    if not path.is_file():
        raise DataError(f"cannot read prompt file {path}: No such file or directory")
    try:
        return [(row, f"{path}, {where}") for batch in read_batches(path, 1024)
                for row, where in zip(batch.rows, batch.where)]
    except InputError as e:
        raise DataError(str(e)) from None


def _parse(line: str, where: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise DataError(f"{where}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as e:  # e.g. an integer past Python's digit limit
        raise DataError(f"{where}: unreadable JSON value: {e}") from None


def _record(row: int, data: Any, where: str) -> PromptRecord:
    found = fields(data) if isinstance(data, dict) else {}
    prompt = prompt_text(found.get("prompt"))
    if prompt is None:
        raise DataError(f"{where}: expected an object with a string 'prompt' (or chat "
                        f"messages, as in verl's datasets)")
    if "ground_truth" not in found:
        raise DataError(f"{where}: missing required field ground_truth (what the reward "
                        f"compares against; use \"\" for a reward that ignores it; verl's "
                        f"datasets keep it in reward_model.ground_truth)")
    extra = found.get("extra_info") or {}
    if not isinstance(extra, dict):
        raise DataError(f"{where}: 'extra_info' must be an object")
    return PromptRecord(
        row=row,
        prompt=prompt,
        data_source=str(found.get("data_source", "")),
        ground_truth=found["ground_truth"],
        extra_info=extra,
    )


def prompt_text(value: Any) -> str | None:
    """The text the model is prompted with: text as given; chat messages (verl's datasets)
    as one user message's content, else each message as ``role: content`` on its line.
    None for anything else."""
    if isinstance(value, str):
        return value
    messages = normalise_prompt(value)
    if not isinstance(messages, list):
        return None
    if len(messages) == 1 and messages[0].get("role") == "user":
        return str(messages[0]["content"])
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)


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

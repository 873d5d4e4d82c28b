"""Read rows of samples from JSONL (a file or stdin) or Parquet, batch by batch.

Errors name the file and, for JSONL, the line. pyarrow is imported only for
Parquet files. Nothing here holds more than one batch of rows.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple

from .errors import InputError, UsageError

Format = Literal["jsonl", "parquet"]

STDIO = "-"
_EXTENSIONS: dict[str, Format] = {".jsonl": "jsonl", ".ndjson": "jsonl",
                                  ".parquet": "parquet", ".pq": "parquet"}
NEEDS_PYARROW = "Parquet files need pyarrow: pip install 'verl-rewards[parquet]'"
_BOM = "\ufeff"


class Batch(NamedTuple):
    """Consecutive input rows, and where each came from (``line 3``) for messages."""

    rows: list[dict[str, Any]]
    where: list[str]


def is_stdio(path: Path) -> bool:
    """True for ``-``: stdin as input, stdout as output."""
    return str(path) == STDIO


def format_of(path: Path, role: str) -> Format:
    """The format ``path``'s extension names (``role`` is "input" or "output"); ``-`` is JSONL."""
    if is_stdio(path):
        return "jsonl"
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(_EXTENSIONS))
        raise UsageError(f"cannot tell the format of {role} file {path} from its extension; "
                         f"use one of {known} (or - for JSONL on stdin/stdout)")
    return fmt


def label(path: Path, role: str) -> str:
    """How messages name ``path``: the path, or ``<stdin>``/``<stdout>``."""
    return ("<stdin>" if role == "input" else "<stdout>") if is_stdio(path) else str(path)


def read_batches(path: Path, batch_size: int, skip: int = 0) -> Iterator[Batch]:
    """The rows of ``path`` (``-``: stdin) in batches of ``batch_size``, after the first ``skip``."""
    if not is_stdio(path) and not path.is_file():
        raise InputError(f"input file not found: {path}")
    if format_of(path, "input") == "parquet":
        rows: Iterator[tuple[dict[str, Any], str]] = _parquet_rows(path)
    else:
        rows = _jsonl_rows(path)
    return _batched(_skipped(rows, skip, path), batch_size)


def _batched(rows: Iterable[tuple[dict[str, Any], str]], size: int) -> Iterator[Batch]:
    batch = Batch([], [])
    for row, where in rows:
        batch.rows.append(row)
        batch.where.append(where)
        if len(batch.rows) >= size:
            yield batch
            batch = Batch([], [])
    if batch.rows:
        yield batch


def _skipped(
    rows: Iterator[tuple[dict[str, Any], str]], skip: int, path: Path
) -> Iterator[tuple[dict[str, Any], str]]:
    for _ in range(skip):
        if next(rows, None) is None:
            raise UsageError(f"cannot resume: the output already holds {skip} rows, more than "
                             f"input {label(path, 'input')} has")
    yield from rows


def _jsonl_rows(path: Path) -> Iterator[tuple[dict[str, Any], str]]:
    name = label(path, "input")
    try:
        with _open_text(path) as file:
            for number, line in enumerate(file, 1):
                if number == 1:
                    line = line.removeprefix(_BOM)
                if line.strip():
                    yield _json_object(name, number, line), f"line {number}"
    except UnicodeDecodeError as e:
        raise InputError(f"{name} is not UTF-8 text: {e}") from e
    except OSError as e:
        raise InputError(f"cannot read input file {name}: {e.strerror or e}") from e


def _open_text(path: Path) -> IO[str]:
    if is_stdio(path):
        return open(sys.stdin.fileno(), encoding="utf-8", closefd=False)
    return path.open(encoding="utf-8")


def _json_object(name: str, number: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}, line {number}: malformed JSON: {e.msg} "
                         f"(column {e.colno})") from e
    except RecursionError as e:
        raise InputError(f"{name}, line {number}: JSON nested too deeply to read") from e
    except ValueError as e:  # e.g. an integer past Python's digit limit
        raise InputError(f"{name}, line {number}: unreadable JSON value: {e}") from e
    if not isinstance(value, dict):
        raise InputError(f"{name}, line {number}: expected a JSON object, "
                         f"got {type(value).__name__}")
    return value


def _parquet_rows(path: Path) -> Iterator[tuple[dict[str, Any], str]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise InputError(f"cannot read {path}: {NEEDS_PYARROW}") from e
    number = 0
    try:
        for record_batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
            for row in record_batch.to_pylist():
                number += 1
                yield row, f"row {number}"
    except Exception as e:
        raise InputError(f"cannot read {path} as Parquet: {e}") from e


def columns_of(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Every key of every row, in first-seen order (rows may differ in keys)."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)

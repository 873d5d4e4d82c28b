"""Read and write rows of samples as JSONL or Parquet, chosen by file extension.

Errors name the file and, for JSONL, the line. pyarrow is imported only for
Parquet files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from .errors import InputError, UsageError

Format = Literal["jsonl", "parquet"]

_EXTENSIONS: dict[str, Format] = {".jsonl": "jsonl", ".ndjson": "jsonl",
                                  ".parquet": "parquet", ".pq": "parquet"}
_NEEDS_PYARROW = "Parquet files need pyarrow: pip install 'verl-rewards[parquet]'"


def format_of(path: Path, role: str) -> Format:
    """The format ``path``'s extension names (``role`` is "input" or "output")."""
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(_EXTENSIONS))
        raise UsageError(f"cannot tell the format of {role} file {path} from its extension; "
                         f"use one of {known}")
    return fmt


def read_rows(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of ``path``, and where each came from (``line 3``) for messages."""
    if not path.is_file():
        raise InputError(f"input file not found: {path}")
    if format_of(path, "input") == "parquet":
        rows = _read_parquet(path)
        return rows, [f"row {i}" for i in range(1, len(rows) + 1)]
    return _read_jsonl(path)


def write_rows(
    path: Path, rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None
) -> None:
    """Write ``rows`` to ``path`` atomically (a failed run leaves no partial file).

    JSONL keeps each row as it is. Parquet needs one schema: every row gets
    every column (``None`` where it has no value), in the order of ``columns``
    (default: first seen).
    """
    fmt = format_of(path, "output")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "parquet":
            columns = columns_of(rows) if columns is None else columns
            _write_parquet(tmp, [{c: row.get(c) for c in columns} for row in rows], path)
        else:
            _write_jsonl(tmp, rows)
        os.replace(tmp, path)
    except OSError as e:
        raise UsageError(f"cannot write output file {path}: {e.strerror or e}") from e
    finally:
        tmp.unlink(missing_ok=True)


def _read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    rows: list[dict[str, Any]] = []
    where: list[str] = []
    try:
        with path.open(encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                if line.strip():
                    rows.append(_json_object(path, number, line))
                    where.append(f"line {number}")
    except UnicodeDecodeError as e:
        raise InputError(f"{path} is not UTF-8 text: {e}") from e
    except OSError as e:
        raise InputError(f"cannot read input file {path}: {e.strerror or e}") from e
    return rows, where


def _json_object(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}, line {number}: malformed JSON: {e.msg} "
                         f"(column {e.colno})") from e
    if not isinstance(value, dict):
        raise InputError(f"{path}, line {number}: expected a JSON object, "
                         f"got {type(value).__name__}")
    return value


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise InputError(f"cannot read {path}: {_NEEDS_PYARROW}") from e
    try:
        return list(pq.read_table(path).to_pylist())
    except Exception as e:
        raise InputError(f"cannot read {path} as Parquet: {e}") from e


def _write_jsonl(tmp: Path, rows: Iterable[dict[str, Any]]) -> None:
    with tmp.open("w", encoding="utf-8") as file:
        for row in rows:
            file.write(json.dumps(row, ensure_ascii=False, default=_jsonable) + "\n")


def _write_parquet(tmp: Path, rows: list[dict[str, Any]], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        raise UsageError(f"cannot write {path}: {_NEEDS_PYARROW}") from e
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowException, TypeError, ValueError) as e:
        raise UsageError(f"cannot write {path} as Parquet ({e}); "
                         f"a column holds values of mixed types: write .jsonl instead") from e
    pq.write_table(table, tmp)


def columns_of(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Every key of every row, in first-seen order (rows may differ in keys)."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)


def _jsonable(value: Any) -> Any:
    """JSON for what rewards commonly return besides plain types (numpy, sets, ...)."""
    for method in ("tolist", "item"):
        if callable(getattr(value, method, None)):
            return getattr(value, method)()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)

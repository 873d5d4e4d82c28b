"""Rows in and out of ``score``, by format: which module reads or writes a path.

JSONL (a file, or stdin/stdout as ``-``) lives in :mod:`.rows_jsonl`, Parquet
in :mod:`.rows_parquet` (pyarrow is imported only for Parquet files), the
stdin/stdout plumbing in :mod:`.rows_stdio`, what they share in :mod:`.rowbase`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import rows_jsonl, rows_parquet
from .errors import InputError, UsageError
from .rowbase import Batch, Sink, WriteMode, format_of, is_stdio


def read_batches(path: Path, batch_size: int, skip: int = 0,
                 validated: bool = False) -> Iterator[Batch]:
    """The rows of ``path`` (``-``: stdin) in batches of at most ``batch_size``, after the
    first ``skip`` (``validated``: read whole before, so checks need not be repeated)."""
    if not is_stdio(path) and not path.is_file():
        raise InputError(f"input file not found: {path}")
    if format_of(path, "input") == "parquet":
        return rows_parquet.read_batches(path, batch_size, skip)
    return rows_jsonl.read_batches(path, batch_size, skip, validated)


def last_row(path: Path) -> dict[str, Any] | None:
    """The last whole row of output ``path`` (``None`` when it holds none)."""
    if format_of(path, "output") == "parquet":
        return rows_parquet.last_row(path)
    return rows_jsonl.last_row(path)


def holds_rows(path: Path) -> bool:
    """Whether an output ``path`` holds anything a new run would destroy."""
    if format_of(path, "output") == "parquet":
        return rows_parquet.holds_rows(path)
    return path.is_file() and path.stat().st_size > 0


def open_sink(path: Path, mode: WriteMode) -> tuple[Sink, int]:
    """Open ``path`` (``-``: stdout, claimed by :func:`.rows_stdio.claim_stdout`) for
    writing; return the sink and the whole rows kept from an earlier run (``resume``)."""
    if is_stdio(path):
        if mode == "resume":
            raise UsageError("--resume needs an output file, not stdout")
        return rows_jsonl.JsonlSink.to_stdout(), 0
    if mode == "new" and holds_rows(path):
        raise UsageError(f"output file {path} exists: add --overwrite to replace it, or "
                         f"--resume to continue it")
    if format_of(path, "output") == "parquet":
        return rows_parquet.ParquetSink.open(path, mode)
    return rows_jsonl.JsonlSink.open(path, mode)

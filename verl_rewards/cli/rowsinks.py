"""Write scored rows as they come: JSONL (a file or stdout) or Parquet.

A sink is opened before any scoring (an unwritable output fails at once),
writes each batch whole, and leaves a valid prefix when the run stops: whole
JSONL lines, or a Parquet file closed with its footer. A value that cannot be
encoded costs its own row a note in ``error``, never the file.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from .errors import UsageError
from .rowfiles import NEEDS_PYARROW, format_of, is_stdio


class Sink(Protocol):
    """Where scored rows go."""

    def write(self, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
        """Append ``rows`` (``columns``: every key they hold, in order, for a fixed schema)."""

    def close(self, failed: bool = False) -> None:
        """Finish the file: whatever was written stays readable. A failed run that wrote
        no row leaves no new file behind."""


def open_sink(path: Path, resume: bool) -> tuple[Sink, int]:
    """Open ``path`` (``-``: stdout) for writing; with ``resume``, also the rows already there."""
    if resume and is_stdio(path):
        raise UsageError("--resume needs an output file, not stdout")
    if format_of(path, "output") == "parquet":
        return _ParquetSink.open(path, resume)
    return _JsonlSink.open(path, resume)


def encode_line(row: dict[str, Any]) -> str:
    """One JSON line for ``row``: non-finite numbers become null, lone surrogates are escaped."""
    try:
        text = json.dumps(row, ensure_ascii=False, allow_nan=False, default=_jsonable)
    except ValueError:  # NaN or an infinity somewhere in the row
        text = json.dumps(_finite(row), ensure_ascii=False, allow_nan=False, default=_jsonable)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: \\uXXXX escapes are valid JSON
        text = json.dumps(_finite(row), ensure_ascii=True, allow_nan=False, default=_jsonable)
    return text + "\n"


class _JsonlSink:
    def __init__(self, file: IO[str], owned: bool, created: Path | None = None,
                 restore: Any = None) -> None:
        self._file, self._owned = file, owned
        self._created = created  # the path, when this run made the file
        self._written = 0
        self._restore = restore  # gives stdout back, for rows written there

    @classmethod
    def open(cls, path: Path, resume: bool) -> tuple[_JsonlSink, int]:
        if is_stdio(path):
            return cls(*_claim_stdout()), 0
        done = _complete_lines(path) if resume and path.exists() else 0
        created = None if path.exists() else path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            file = path.open("a" if resume else "w", encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write output file {path}: {e.strerror or e}") from e
        return cls(file, owned=True, created=created), done

    def write(self, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
        self._file.write("".join(_safe_line(row) for row in rows))
        self._file.flush()
        self._written += len(rows)

    def close(self, failed: bool = False) -> None:
        if self._owned:
            self._file.close()
        if self._restore is not None:
            self._restore()
            self._restore = None
        if failed and self._created is not None and not self._written:
            self._created.unlink(missing_ok=True)


def _claim_stdout() -> tuple[IO[str], bool, None, Any]:
    """A private handle on stdout for the rows; while it is open, whatever else
    writes to stdout (a reward's print; a native library, when stdout is the
    process's own) goes to stderr, so the JSONL stream holds nothing but rows."""
    previous = sys.stdout
    previous.flush()
    saved_fd = _dup_stdout() if previous is sys.__stdout__ else None
    if saved_fd is None:  # stdout is already redirected in Python (an embedding host, a test)
        sys.stdout = sys.stderr

        def give_back() -> None:
            sys.stdout = previous

        return previous, False, None, give_back
    rows = os.fdopen(os.dup(saved_fd), "w", encoding="utf-8", closefd=True)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def restore() -> None:
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = previous

    return rows, True, None, restore


def _dup_stdout() -> int | None:
    try:
        return os.dup(1)
    except OSError:  # no file descriptor 1
        return None


def _safe_line(row: dict[str, Any]) -> str:
    try:
        return encode_line(row)
    except (TypeError, ValueError, RecursionError) as e:
        kept = {}
        for key, value in row.items():
            try:
                encode_line({key: value})
                kept[key] = value
            except (TypeError, ValueError, RecursionError):
                kept[key] = None
        kept["error"] = _noted(row.get("error"), f"OutputError: cannot encode as JSON: {e}")
        return encode_line(kept)


def _complete_lines(path: Path) -> int:
    """Count the whole lines of ``path`` and cut off a trailing partial one."""
    count, keep = 0, 0
    with path.open("rb") as file:
        for line in file:
            if not line.endswith(b"\n"):
                break
            keep += len(line)
            if line.strip():
                count += 1
    if keep != path.stat().st_size:
        os.truncate(path, keep)
    return count


class _ParquetSink:
    """Rows go to a temporary file that replaces ``path`` on close, footer included."""

    def __init__(self, path: Path, tmp: Path, pa: Any, pq: Any, resume: bool = False) -> None:
        self._path, self._tmp, self._pa, self._pq = path, tmp, pa, pq
        self._writer: Any = None
        self._schema: Any = None
        # Nothing written and the run failed: a new file is not left behind; an
        # earlier result is replaced (as JSONL truncates it), unless resuming it.
        self._keep_on_failure = resume or not path.exists()

    @classmethod
    def open(cls, path: Path, resume: bool) -> tuple[_ParquetSink, int]:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as e:
            raise UsageError(f"cannot write {path}: {NEEDS_PYARROW}") from e
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.touch()
        except OSError as e:
            raise UsageError(f"cannot write output file {path}: {e.strerror or e}") from e
        sink = cls(path, tmp, pa, pq, resume)
        done = 0
        if resume and path.exists() and _parquet_rows(pq, path):  # an empty file has no schema to keep
            try:
                table = pq.read_table(path)
            except Exception as e:
                tmp.unlink(missing_ok=True)
                raise UsageError(f"cannot resume: {path} is not a readable Parquet file ({e})") from e
            sink._start(table.schema)
            sink._writer.write_table(table)
            done = table.num_rows
        return sink, done

    def _start(self, schema: Any) -> None:
        self._schema = schema
        self._writer = self._pq.ParquetWriter(self._tmp, schema)

    def write(self, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
        if not rows:
            return
        if self._writer is None:
            self._start(self._first_schema([{c: r.get(c) for c in columns} for r in rows]))
        self._writer.write_table(self._table(rows))

    def _first_schema(self, rows: list[dict[str, Any]]) -> Any:
        """The first batch's types (``error`` is text even when that batch had none)."""
        pa = self._pa
        schema = pa.schema([(k, pa.string()) for k in rows[0]])
        for candidates in (rows, rows[:1]):
            try:
                schema = pa.Table.from_pylist(candidates).schema
                break
            except (pa.ArrowException, TypeError, ValueError):
                continue
        index = schema.get_field_index("error")
        if index >= 0 and pa.types.is_null(schema.field(index).type):
            schema = schema.set(index, pa.field("error", pa.string()))
        return schema

    def _table(self, rows: Sequence[dict[str, Any]]) -> Any:
        pa, names = self._pa, self._schema.names
        try:
            return pa.Table.from_pylist([{n: r.get(n) for n in names} for r in rows],
                                        schema=self._schema)
        except (pa.ArrowException, TypeError, ValueError):
            return pa.Table.from_pylist([self._fitted(r) for r in rows], schema=self._schema)

    def _fitted(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` with each value the schema cannot hold set to null, noted in ``error``."""
        pa, out, bad = self._pa, {}, []
        for field in self._schema:
            value = row.get(field.name)
            try:
                pa.array([value], type=field.type)
                out[field.name] = value
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                out[field.name] = None
                bad.append(f"{field.name} ({field.type})")
        dropped = [k for k in row if k not in self._schema.names and row[k] is not None]
        notes = []
        if bad:
            notes.append(f"column(s) {', '.join(bad)} cannot hold this row's value")
        if dropped:
            notes.append(f"column(s) {', '.join(dropped)} not in the file's schema")
        if notes and "error" in self._schema.names:
            out["error"] = _noted(row.get("error"), "OutputError: " + "; ".join(notes) +
                                  " (written as null; write .jsonl to keep them)")
        return out

    def close(self, failed: bool = False) -> None:
        try:
            if self._writer is None and failed and self._keep_on_failure:
                return
            if self._writer is None:  # no rows: still a readable (empty) file
                self._pq.write_table(self._pa.table({}), self._tmp)
            else:
                self._writer.close()
            os.replace(self._tmp, self._path)
        finally:
            self._tmp.unlink(missing_ok=True)


def _parquet_rows(pq: Any, path: Path) -> int:
    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception:  # noqa: BLE001 - unreadable: read_table below says why
        return 1


def _noted(error: Any, note: str) -> str:
    return f"{error}; {note}" if error else note


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    """JSON for what rewards commonly return besides plain types (numpy, sets, ...)."""
    for method in ("tolist", "item"):
        if callable(getattr(value, method, None)):
            return _finite(getattr(value, method)())
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)

"""Parquet rows, read and written.

Reading keeps each batch as Arrow too, so input columns are written back with
their own types (``decimal(10,2)``, ``timestamp[ns]``, a column null in the
first batch) instead of what Python values would infer; ``map`` columns reach
the reward as dicts.

Writing never puts a run's rows where a crash can lose them: each batch is a
complete Parquet file (a *part*) in ``.NAME.parts/`` beside the output, made
whole by a rename, so a ``kill -9`` loses at most the batch in flight. Closing
the run (or the next ``--resume``) merges the output kept so far and the parts
into a new file, checks it, and only then renames it over the output: a full
disk or a crash while merging leaves the earlier output and the parts as they
were.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..wire import json_data
from .errors import InputError, OutputError, UsageError
from .output import say
from .rowbase import NEEDS_PYARROW, Batch, WriteMode, noted, too_few_rows

_PRODUCED_KEY = b"verl_rewards.produced"  # schema metadata: the columns scoring added
_LAST = ("error", "status")  # produced columns that end every row


def _pyarrow(path: Path, role: str) -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        error = InputError if role == "input" else UsageError
        raise error(f"cannot {'read' if role == 'input' else 'write'} {path}: {NEEDS_PYARROW}") from e
    return pa, pq


# -- reading ----------------------------------------------------------------------


def read_batches(path: Path, batch_size: int, skip: int = 0) -> Iterator[Batch]:
    """The rows of Parquet ``path`` in batches of at most ``batch_size``, after ``skip``."""
    pa, pq = _pyarrow(path, "input")
    number = 0
    try:
        file = pq.ParquetFile(path)
        with_dicts = _plain_maker(pa, file.schema_arrow)
        for record_batch in file.iter_batches(batch_size=batch_size):
            if number + record_batch.num_rows <= skip:
                number += record_batch.num_rows
                continue
            if number < skip:
                record_batch = record_batch.slice(skip - number)
                number = skip
            rows = with_dicts(record_batch.to_pylist())
            where = [f"row {number + i + 1}" for i in range(len(rows))]
            number += len(rows)
            yield Batch(rows, where, record_batch)
    except InputError:
        raise
    except Exception as e:
        raise InputError(f"cannot read {path} as Parquet: {e}") from e
    if number < skip:
        raise too_few_rows(path, skip)


def _plain_maker(pa: Any, schema: Any) -> Any:
    """A function turning rows' ``map`` values (lists of pairs in pyarrow) into dicts."""
    mapped = {f.name: f.type for f in schema if _has_map(pa, f.type)}
    if not mapped:
        return lambda rows: rows

    def with_dicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            for name, kind in mapped.items():
                row[name] = _plain(pa, row.get(name), kind)
        return rows

    return with_dicts


def _has_map(pa: Any, kind: Any) -> bool:
    if pa.types.is_map(kind):
        return True
    if pa.types.is_struct(kind):
        return any(_has_map(pa, f.type) for f in kind)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _has_map(pa, kind.value_type)
    return False


def _plain(pa: Any, value: Any, kind: Any) -> Any:
    if value is None:
        return None
    if pa.types.is_map(kind):
        return {k: _plain(pa, v, kind.item_type) for k, v in value}
    if pa.types.is_struct(kind):
        return {f.name: _plain(pa, value.get(f.name), f.type) for f in kind}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return [_plain(pa, v, kind.value_type) for v in value]
    return value


def last_row(path: Path) -> dict[str, Any] | None:
    """The last row of Parquet output ``path`` (``None`` when it has none)."""
    pa, pq = _pyarrow(path, "output")
    file = pq.ParquetFile(path)
    for group in reversed(range(file.num_row_groups)):
        table = file.read_row_group(group)
        if table.num_rows:
            rows: list[dict[str, Any]] = _plain_maker(pa, table.schema)(
                table.slice(table.num_rows - 1).to_pylist())
            return rows[0]
    return None


# -- writing ------------------------------------------------------------------------


def parts_dir(path: Path) -> Path:
    """Where a run's finished batches wait to be merged into ``path``."""
    return path.with_name(f".{path.name}.parts")


def holds_rows(path: Path) -> bool:
    """Whether ``path`` or its parts hold anything a new run would destroy."""
    parts = parts_dir(path)
    return (path.is_file() and path.stat().st_size > 0) or (
        parts.is_dir() and any(parts.glob("*.parquet")))


class ParquetSink:
    """Scored rows as Parquet: one part file per batch, merged into the output on close."""

    def __init__(self, path: Path, pa: Any, pq: Any, keep: int) -> None:
        self._path, self._pa, self._pq = path, pa, pq
        self._parts = parts_dir(path)
        self._keep = keep  # rows of the existing output this run continues
        self._next = keep  # the row number the next part starts at
        self._types: dict[str, Any] = {}  # column -> the type its first non-null values set
        self._begun = False

    @classmethod
    def open(cls, path: Path, mode: WriteMode) -> tuple[ParquetSink, int]:
        """Open ``path``; with ``resume``, first merge what an earlier run left."""
        pa, pq = _pyarrow(path, "output")
        probe = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for stale in path.parent.glob(f".{path.name}.*.tmp"):  # a merge killed midway
                stale.unlink(missing_ok=True)
            probe.touch()
            probe.unlink()
            if mode == "resume" and parts_dir(path).is_dir():
                _Merge(pa, pq, path).run()
        except OSError as e:
            raise UsageError(f"cannot write output file {path}: {e.strerror or e}") from e
        keep = _readable_rows(pq, path) if mode == "resume" and path.exists() else 0
        sink = cls(path, pa, pq, keep)
        if keep:
            sink._types = {f.name: f.type for f in pq.read_schema(path)
                           if not pa.types.is_null(f.type)}
        return sink, keep

    def begin(self) -> None:
        """Start this run's parts, continuing the kept rows (none when overwriting)."""
        try:
            shutil.rmtree(self._parts, ignore_errors=True)
            self._parts.mkdir()
            (self._parts / "base.json").write_text(json.dumps({"keep_rows": self._keep}),
                                                   encoding="utf-8")
        except OSError as e:
            raise OutputError(f"cannot write {self._path}: {e}; nothing was changed") from e
        self._begun = True

    def write(self, batch: Batch, produced: Mapping[str, Sequence[Any]]) -> None:
        """Write ``batch`` as one part file, complete or not at all."""
        if not batch.rows:
            return
        table = _Table(self._pa, self._types).build(batch, produced)
        final = self._parts / f"{self._next:012d}.parquet"
        tmp = final.with_suffix(".tmp")
        try:
            self._pq.write_table(table, tmp)
            os.replace(tmp, final)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise OutputError(f"cannot write {self._path}: {e}; the rows written before this "
                              f"batch are kept: fix the cause, then add --resume") from e
        self._next += len(batch.rows)
        for field in table.schema:
            if not self._pa.types.is_null(field.type):
                self._types.setdefault(field.name, field.type)

    def close(self, failed: bool = False) -> None:
        """Merge the kept output and this run's parts into ``path``.

        A failed run that wrote nothing leaves no new file; a merge that fails after a
        failed run leaves the parts for ``--resume`` and says so, without hiding the
        run's own error.
        """
        if not self._begun:  # nothing of this run's: the output stays as it was
            return
        if self._next == self._keep and (failed or self._keep):  # nothing new to merge
            shutil.rmtree(self._parts, ignore_errors=True)
            return
        merge = _Merge(self._pa, self._pq, self._path, rows=self._next)
        if not failed:
            merge.run()
            return
        try:
            merge.run()
        except OutputError as e:
            say("note", str(e))


def _readable_rows(pq: Any, path: Path) -> int:
    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception as e:
        raise UsageError(f"cannot resume: {path} is not a readable Parquet file ({e})") from e


class _Table:
    """One batch as an Arrow table: input columns (as read, for Parquet input), then the
    produced ones. A value a column's type cannot hold is written as null and noted in
    that row's ``error``, never losing the batch."""

    def __init__(self, pa: Any, types: Mapping[str, Any]) -> None:
        self._pa, self._types = pa, types
        self._notes: dict[int, list[str]] = {}

    def build(self, batch: Batch, produced: Mapping[str, Sequence[Any]]) -> Any:
        pa = self._pa
        names: list[str] = []
        arrays: list[Any] = []
        if batch.arrow is not None:
            for name, column in zip(batch.arrow.schema.names, batch.arrow.columns):
                if name not in produced:
                    names.append(name)
                    arrays.append(column)
        else:
            for name in _columns_of(batch.rows):
                if name not in produced:
                    names.append(name)
                    arrays.append(self._array(name, [r.get(name) for r in batch.rows]))
        extras = [n for n in produced if n not in _LAST]
        for name in extras:
            names.append(name)
            arrays.append(self._array(name, list(produced[name])))
        for name in (n for n in _LAST if n in produced):
            values = list(produced[name])
            if name == "error":
                values = self._noted(values)
            names.append(name)
            arrays.append(self._array(name, values, pa.string()))
        metadata = {_PRODUCED_KEY: json.dumps(list(produced)).encode()}
        return pa.Table.from_arrays(arrays, names=names).replace_schema_metadata(metadata)

    def _array(self, name: str, values: list[Any], default: Any = None) -> Any:
        pa = self._pa
        kind = self._types.get(name, default)
        try:
            return pa.array(values, type=kind)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            pass
        # Values Arrow does not take as they are (a torch tensor, a set) as the wire's plain data.
        values = [json_data(v) for v in values]
        try:
            return pa.array(values, type=kind)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            pass
        if kind is None:  # mixed values: the first one's type decides
            first = next(v for v in values if v is not None)
            kind = pa.array([first]).type
        fitted = []
        for i, value in enumerate(values):
            try:
                pa.array([value], type=kind)
                fitted.append(value)
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                fitted.append(None)
                self._notes.setdefault(i, []).append(f"{name} ({kind})")
        return pa.array(fitted, type=kind)

    def _noted(self, errors: list[Any]) -> list[Any]:
        for i, columns in self._notes.items():
            errors[i] = noted(errors[i], f"OutputError: column(s) {', '.join(columns)} cannot "
                                         f"hold this row's value (written as null; write .jsonl "
                                         f"to keep them)")
        return errors


def _columns_of(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)


class _Merge:
    """The kept output plus a run's parts, written to a new file that replaces the output
    only once it is complete, synced and read back with every row. ``rows``: how many the
    run that wrote the parts knows the result must hold; a merge short of them (parts
    removed under it) leaves the output as it was."""

    def __init__(self, pa: Any, pq: Any, path: Path, rows: int | None = None) -> None:
        self._pa, self._pq, self._path = pa, pq, path
        self._parts = parts_dir(path)
        self._rows = rows

    def run(self) -> None:
        if self._rows is None and not any(self._parts.glob("*.parquet")):
            shutil.rmtree(self._parts, ignore_errors=True)  # no batch finished: nothing to add
            return
        sources = self._sources()
        total = sum(rows for _, rows in sources)
        if self._rows is not None and total != self._rows:
            raise OutputError(f"cannot finish {self._path}: this run wrote {self._rows} rows "
                              f"(with those it continued), but {self._parts} holds {total} "
                              f"(removed by another process?); {self._path} is as it was: "
                              f"score again with --overwrite")
        schema = self._schema([self._pq.read_schema(p) for p, _ in sources])
        tmp = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
        try:
            self._write(tmp, sources, schema)
            written = int(self._pq.ParquetFile(tmp).metadata.num_rows)
            if written != total:
                raise OSError(f"read back {written} rows of {total}")
            os.replace(tmp, self._path)
            _sync_dir(self._path.parent)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise OutputError(self._kept_message(e, sources)) from e
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        shutil.rmtree(self._parts, ignore_errors=True)

    def _kept_message(self, error: OSError, sources: list[tuple[Path, int]]) -> str:
        kept = sum(rows for source, rows in sources if source == self._path)
        waiting = sum(rows for source, rows in sources if source != self._path)
        return (f"cannot finish {self._path}: {error}; nothing is lost: {self._path} is as it "
                f"was ({kept} rows) and {waiting} more rows wait in {self._parts}: fix the "
                f"cause (free space?), then run again with --resume")

    def _sources(self) -> list[tuple[Path, int]]:
        """The kept output (when the parts continue it) and the parts, checked contiguous."""
        base = self._parts / "base.json"
        try:
            keep = json.loads(base.read_text(encoding="utf-8"))["keep_rows"]
        except (OSError, ValueError, KeyError, TypeError) as e:  # begin() writes it before any part
            raise OutputError(f"cannot finish {self._path}: {base} is missing or unreadable "
                              f"({e}), so what its parts continue is unknown; {self._path} is "
                              f"as it was: score again with --overwrite") from e
        sources: list[tuple[Path, int]] = []
        if keep:
            rows = _readable_rows(self._pq, self._path)
            if rows != keep:
                raise OutputError(f"cannot finish {self._path}: it holds {rows} rows, but the "
                                  f"parts in {self._parts} continue {keep}; score again with "
                                  f"--overwrite")
            sources.append((self._path, keep))
        expected = keep
        for part in sorted(self._parts.glob("*.parquet")):
            if int(part.stem) != expected:
                raise OutputError(f"cannot finish {self._path}: part {part} starts at row "
                                  f"{int(part.stem)}, expected {expected}; score again with "
                                  f"--overwrite")
            rows = int(self._pq.ParquetFile(part).metadata.num_rows)
            sources.append((part, rows))
            expected += rows
        return sources

    def _schema(self, schemas: list[Any]) -> Any:
        """Input columns first, then the produced ones (``error``, ``status`` last); each
        column's type is its first non-null one."""
        pa = self._pa
        types: dict[str, Any] = {}
        produced: dict[str, None] = {}
        for schema in schemas:
            meta = (schema.metadata or {}).get(_PRODUCED_KEY)
            produced.update(dict.fromkeys(json.loads(meta) if meta else ()))
            for field in schema:
                if field.name not in types or pa.types.is_null(types[field.name]):
                    types[field.name] = field.type
        inputs = [n for n in types if n not in produced]
        added = [n for n in types if n in produced and n not in _LAST]
        last = [n for n in _LAST if n in types]
        metadata = {_PRODUCED_KEY: json.dumps([*added, *last]).encode()}
        return pa.schema([(n, types[n]) for n in [*inputs, *added, *last]], metadata=metadata)

    def _write(self, tmp: Path, sources: list[tuple[Path, int]], schema: Any) -> None:
        with self._pq.ParquetWriter(tmp, schema) as writer:
            for source, _ in sources:
                for record_batch in self._pq.ParquetFile(source).iter_batches(batch_size=4096):
                    writer.write_table(self._conform(record_batch, schema))
        with open(tmp, "rb") as file:
            os.fsync(file.fileno())

    def _conform(self, record_batch: Any, schema: Any) -> Any:
        pa, n = self._pa, record_batch.num_rows
        names = record_batch.schema.names
        arrays = []
        for field in schema:
            if field.name in names:
                column = record_batch.column(names.index(field.name))
                arrays.append(column if column.type == field.type else column.cast(field.type))
            else:
                arrays.append(pa.nulls(n, field.type))
        return pa.Table.from_arrays(arrays, schema=schema)


def _sync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be synced
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

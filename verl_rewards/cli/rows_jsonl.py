"""JSONL rows, read and written: one JSON object a line, in a file or on stdin/stdout.

Lines end at ``\\n`` only (a raw ``\\r`` is JSON whitespace, and CRLF files
read as they are). Errors name the file and line. The writer flushes whole
lines per batch, so an interrupted run leaves whole rows, and a value that
cannot be encoded costs its own row a note in ``error``, never the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..wire import dumps
from . import rows_stdio
from .errors import InputError, OutputError, UsageError
from .rowbase import Batch, WriteMode, is_stdio, label, noted, too_few_rows

_BOM = "\ufeff"


def read_batches(path: Path, batch_size: int, skip: int = 0,
                 validated: bool = False) -> Iterator[Batch]:
    """The rows of JSONL ``path`` (``-``: stdin) in batches of ``batch_size``, after ``skip``.

    ``validated``: the file was read whole already, duplicate keys included; the check
    for them (a third of the parse time) is not repeated.
    """
    rows = _rows(path, unique=not validated)
    for _ in range(skip):
        if next(rows, None) is None:
            raise too_few_rows(path, skip)
    batch = Batch([], [])
    for row, where in rows:
        batch.rows.append(row)
        batch.where.append(where)
        if len(batch.rows) >= batch_size:
            yield batch
            batch = Batch([], [])
    if batch.rows:
        yield batch


def _rows(path: Path, unique: bool) -> Iterator[tuple[dict[str, Any], str]]:
    name = label(path, "input")
    try:
        with _open_text(path) as file:
            for number, line in enumerate(file, 1):
                if number == 1:
                    line = line.removeprefix(_BOM)
                if line.strip():
                    yield parse_line(name, number, line, unique), f"line {number}"
    except UnicodeDecodeError as e:
        raise InputError(f"{name} is not UTF-8 text: {e}") from e
    except OSError as e:
        raise InputError(f"cannot read input file {name}: {e.strerror or e}") from e


def _open_text(path: Path) -> IO[str]:
    if is_stdio(path):
        return rows_stdio.open_stdin()
    return path.open(encoding="utf-8", newline="\n")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def parse_line(name: str, number: int, line: str, unique: bool = True) -> dict[str, Any]:
    """One JSON object from ``line`` (``number`` of input ``name``), or :class:`InputError`;
    ``unique``: a key twice in one object is an error too."""
    try:
        value = json.loads(line, object_pairs_hook=_unique_keys if unique else None)
    except _DuplicateKey as e:
        raise InputError(f"{name}, line {number}: key {e.key!r} appears twice in one object; "
                         f"JSON readers disagree on which value wins: keep one") from e
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


class JsonlSink:
    """Scored rows as JSON lines, flushed per batch."""

    def __init__(self, file: IO[str], owned: bool, created: Path | None = None,
                 name: str = "<stdout>", overwrite: bool = False) -> None:
        self._file, self._owned, self._name = file, owned, name
        self._created = created  # the path, when this run made the file
        self._overwrite = overwrite  # emptied by begin()
        self._written = 0

    @classmethod
    def to_stdout(cls) -> JsonlSink:
        """Rows to stdout (claimed by :func:`.rows_stdio.claim_stdout`)."""
        return cls(rows_stdio.rows_stdout(), owned=False)

    @classmethod
    def open(cls, path: Path, mode: WriteMode) -> tuple[JsonlSink, int]:
        """Open ``path``: a fresh file, or (``resume``) the whole lines already there."""
        exists = path.exists()
        done = _complete_lines(path) if mode == "resume" and exists else 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            file = path.open("a", encoding="utf-8")  # writable, and nothing cut yet
        except OSError as e:
            raise UsageError(f"cannot write output file {path}: {e.strerror or e}") from e
        return cls(file, owned=True, created=None if exists else path, name=str(path),
                   overwrite=mode == "overwrite"), done

    def begin(self) -> None:
        """Empty an overwritten output, now that rows are coming."""
        if self._overwrite:
            self._file.truncate(0)

    def write(self, batch: Batch, produced: Mapping[str, Sequence[Any]]) -> None:
        """Append one line per row: the input row, then the produced columns."""
        names = list(produced)
        lines = []
        for i, row in enumerate(batch.rows):
            kept = {k: v for k, v in row.items() if k not in produced}
            lines.append(_safe_line({**kept, **{k: produced[k][i] for k in names}}))
        try:
            self._file.write("".join(lines))
            self._file.flush()
        except BrokenPipeError:  # a reader that stopped (`| head`): not a disk problem
            raise
        except OSError as e:
            raise OutputError(f"cannot write {self._name}: {e}; the whole rows before this "
                              f"batch are kept: fix the cause, then add --resume") from e
        self._written += len(lines)

    def close(self, failed: bool = False) -> None:
        """Close the file; a failed run that wrote nothing to a new file removes it."""
        if self._owned:
            try:
                self._file.close()
            except OSError:  # the failed flush of a batch already reported
                if not failed:
                    raise
        if failed and self._created is not None and not self._written:
            self._created.unlink(missing_ok=True)


def encode_line(row: dict[str, Any]) -> str:
    """One JSON line for ``row`` in the one wire encoding (:mod:`verl_rewards.wire`: non-finite
    numbers become null, NumPy and torch values numbers and lists, ...); lone surrogates are
    escaped."""
    text = dumps(row)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: \\uXXXX escapes are valid JSON
        text = dumps(row, ascii=True)
    return text + "\n"


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
        kept["error"] = noted(row.get("error"), f"OutputError: cannot encode as JSON: {e}")
        return encode_line(kept)


def last_row(path: Path) -> dict[str, Any] | None:
    """The last whole line of ``path`` as a row (``None`` for none, or one that is not JSON)."""
    last = None
    with path.open("rb") as file:
        for line in file:
            if line.endswith(b"\n") and line.strip():
                last = line
    try:
        value = json.loads(last) if last is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


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

"""What the row formats of ``score`` share: the format of a path, how messages name it,
and the records that travel between reader, scorer and writer."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from .errors import UsageError

Format = Literal["jsonl", "parquet"]
WriteMode = Literal["new", "overwrite", "resume"]

STDIO = "-"
_EXTENSIONS: dict[str, Format] = {".jsonl": "jsonl", ".ndjson": "jsonl",
                                  ".parquet": "parquet", ".pq": "parquet"}
NEEDS_PYARROW = "Parquet files need pyarrow: pip install 'verl-rewards[parquet]'"


class Batch(NamedTuple):
    """Consecutive input rows, where each came from (``line 3``) for messages, and for
    Parquet input the same rows as an Arrow record batch (so their types survive)."""

    rows: list[dict[str, Any]]
    where: list[str]
    arrow: Any = None


class Sink(Protocol):
    """Where scored rows go. Opening one checks the output can be written and touches
    nothing an earlier run left; :meth:`begin` is where an overwritten output goes."""

    def begin(self) -> None:
        """Make the output ready for this run's rows (an overwritten output is emptied
        here, not before): called once, before the first :meth:`write`."""

    def write(self, batch: Batch, produced: Mapping[str, Sequence[Any]]) -> None:
        """Append ``batch``'s rows, each with the ``produced`` columns (score, extra keys,
        error, status: one value per row) replacing input columns of the same name."""

    def close(self, failed: bool = False) -> None:
        """Finish the file: whatever was written stays readable. A failed run that wrote
        no row leaves no new file behind."""


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


def too_few_rows(path: Path, skip: int) -> UsageError:
    """The error for a resume whose output holds more rows than the input."""
    return UsageError(f"cannot resume: the output already holds {skip} rows, more than "
                      f"input {label(path, 'input')} has")


def noted(error: Any, note: str) -> str:
    """``error`` with ``note`` appended (``note`` alone when there was no error)."""
    return f"{error}; {note}" if error else note


def output_is_input(source: Path, target: Path) -> bool:
    """Whether the output would write over the input: one regular file, whether through a
    hard link, a symlink, another spelling of the path, or ``-`` redirected to it."""
    try:
        a, b = _stat(source, 0), _stat(target, 1)
    except OSError:  # the output does not exist yet: only another spelling can match
        return not is_stdio(source) and not is_stdio(target) and source.resolve() == target.resolve()
    return stat.S_ISREG(a.st_mode) and os.path.samestat(a, b)


def _stat(path: Path, fd: int) -> os.stat_result:
    return os.fstat(fd) if is_stdio(path) else os.stat(path)

"""Input rows -> the samples they hold, and the rows ``score`` writes: one per sample.

A row is read by :mod:`verl_rewards.layout` (its own columns, verl's layout, or the paths
``--columns`` gives). A row whose response is a list (verl's ``responses``: n responses
per prompt) becomes one row per response: the input row with the list replaced, in its
place, by ``solution_str`` (the response scored), ``row_index`` (the input row, from 0)
and ``response_index`` (from 0). Parquet rows are expanded as Arrow too, so every other
column keeps its type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..layout import RESPONSE_INDEX, ROW_INDEX, expand, fields
from .errors import InputError
from .rowbase import Batch, label

ADDED = ("solution_str", ROW_INDEX, RESPONSE_INDEX)  # the columns an expanded row gets


class Expanded(NamedTuple):
    """The rows to write (one per sample) and each sample's fields; ``expanded``: some
    row listed several responses."""

    batch: Batch
    fields: list[dict[str, Any]]
    expanded: bool = False

    def __len__(self) -> int:
        return len(self.fields)

    def slice(self, start: int, stop: int | None = None) -> Expanded:
        """Samples ``start`` to ``stop`` (their rows, sources and Arrow rows)."""
        stop = len(self) if stop is None else min(stop, len(self))
        batch = self.batch
        arrow = None if batch.arrow is None else batch.arrow.slice(start, stop - start)
        return Expanded(Batch(batch.rows[start:stop], batch.where[start:stop], arrow),
                        self.fields[start:stop], self.expanded)


def expand_batch(batch: Batch, columns: Mapping[str, str], source: Path, first_row: int,
                 arrow: bool = True) -> Expanded:
    """``batch``'s samples; ``first_row``: the input row number (from 0) of its first row.
    ``arrow=False``: only the fields and rows (a check of the input, which writes nothing).

    A row listing no response at all is an :class:`InputError` naming it."""
    if not columns:  # the common case first: each row one response, as text
        # A flat row is its own fields (as_samples reads only theirs): no copy per row.
        found = [row if "ground_truth" in row and type(row.get("solution_str")) is str else fields(row)
                 for row in batch.rows]
        if all(type(f.get("solution_str")) is str for f in found):
            return Expanded(batch, found)
    expansions = [expand(row, columns) for row in batch.rows]
    if all(e.responses is None for e in expansions):
        return Expanded(batch, [e.fields for e in expansions])
    rows: list[dict[str, Any]] = []
    where: list[str] = []
    found = []
    taken: list[int] = []  # the input row of each output row
    added: list[tuple[Any, int | None, int | None]] = []  # solution_str, row_index, response_index
    places: set[str] = set()
    for i, (row, (own, responses, place)) in enumerate(zip(batch.rows, expansions)):
        if responses is None:
            rows.append(row)
            where.append(batch.where[i])
            found.append(own)
            taken.append(i)
            added.append((row.get("solution_str"), row.get(ROW_INDEX), row.get(RESPONSE_INDEX)))
            continue
        if not responses:
            raise InputError(f"{label(source, 'input')}, {batch.where[i]}: {place!r} lists no "
                             f"responses: nothing to score")
        places.add(str(place))
        for j, response in enumerate(responses):
            rows.append(_with_response(row, str(place), response, first_row + i, j))
            where.append(f"{batch.where[i]}, response {j + 1}")
            found.append({**own, "solution_str": response})
            taken.append(i)
            added.append((response, first_row + i, j))
    table = _arrow(batch.arrow, taken, added, places) if arrow and batch.arrow is not None else None
    return Expanded(Batch(rows, where, table), found, expanded=True)


def _with_response(row: Mapping[str, Any], place: str, response: Any, row_index: int,
                   response_index: int) -> dict[str, Any]:
    """``row`` with its list of responses (at ``place``) replaced by one of them."""
    new = (response, row_index, response_index)
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key == place:
            out.update(zip(ADDED, new))
        elif key not in ADDED:
            out[key] = value
    if place not in row:  # the list was inside a struct column, which stays as it is
        out.update(zip(ADDED, new))
    return out


def _arrow(record_batch: Any, taken: list[int], added: list[tuple[Any, Any, Any]], places: set[str]) -> Any:
    """The expanded rows as Arrow: each input row repeated once per response, the list
    column replaced by the added columns."""
    import pyarrow as pa

    repeated = record_batch.take(pa.array(taken, type=pa.int64()))
    new = [pa.array([a[0] for a in added]), pa.array([a[1] for a in added], type=pa.int64()),
           pa.array([a[2] for a in added], type=pa.int64())]
    names: list[str] = []
    arrays: list[Any] = []
    inserted = False
    for name, column in zip(repeated.schema.names, repeated.columns):
        if name in places and not inserted:
            names += ADDED
            arrays += new
            inserted = True
        elif name not in ADDED and name not in places:
            names.append(name)
            arrays.append(column)
    if not inserted:
        names += ADDED
        arrays += new
    return pa.RecordBatch.from_arrays(arrays, names=names)


def chunks(expanded: Iterator[Expanded], size: int, skip: int = 0) -> Iterator[Expanded]:
    """The samples of ``expanded`` after the first ``skip``, in pieces of at most ``size``."""
    for part in expanded:
        if skip >= len(part):
            skip -= len(part)
            continue
        if skip:
            part, skip = part.slice(skip), 0
        if len(part) <= size:
            yield part
            continue
        for start in range(0, len(part), size):
            yield part.slice(start, start + size)

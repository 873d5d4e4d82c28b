"""Where a row of a sample file keeps each sample field: the flat layout, verl's, or paths given.

Every reader of sample files reads a row by these rules (``verl-rewards score``, the
reference trainer, the reward service's task files), so a file that scores also trains:

* each field from its own column (``data_source``, ``solution_str``, ``ground_truth``,
  ``extra_info``, ``prompt``), else from where verl keeps it: ``reward_model.ground_truth``
  (verl's preprocessed datasets: ``reward_model: {ground_truth, style}``, the prompt as chat
  messages, ``extra_info`` a struct) and ``responses`` (verl's generation output: a list
  column, n responses per prompt);
* ``columns`` (``--columns``) names a field's place instead: a column, or a dotted path into
  struct and map columns (``reward_model.ground_truth``); a column whose own name holds the
  dot is taken first;
* a response value that is a list (or tuple, or array) holds several responses: one sample
  each (:func:`expand`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

# Each sample field's places, tried in order when no column is named for it.
PLACES: Final[Mapping[str, tuple[str, ...]]] = {
    "data_source": ("data_source",),
    "solution_str": ("solution_str", "responses"),
    "ground_truth": ("ground_truth", "reward_model.ground_truth"),
    "extra_info": ("extra_info",),
    "prompt": ("prompt",),
}
# The columns an expanded row gets: the response it scores and where it came from.
ROW_INDEX: Final = "row_index"
RESPONSE_INDEX: Final = "response_index"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()  # what :func:`lookup` returns for a path a row does not hold


class Expansion(NamedTuple):
    """What one row holds: its sample fields, and its responses when they are a list."""

    fields: dict[str, Any]  # the fields found (``solution_str`` as the row holds it)
    responses: list[Any] | None  # the listed responses, else None (one sample)
    response_place: str | None  # the path the responses were read from


def lookup(row: Mapping[str, Any], path: str) -> Any:
    """The value at ``path`` in ``row``: a key, else a dotted path through mappings
    (``reward_model.ground_truth``), a key holding a dot taken first; else :data:`MISSING`."""
    if path in row:
        return row[path]
    start = 0
    while (dot := path.find(".", start)) > 0:
        head = row.get(path[:dot], MISSING)
        if isinstance(head, Mapping):
            found = lookup(head, path[dot + 1:])
            if found is not MISSING:
                return found
        start = dot + 1
    return MISSING


def place_of(row: Mapping[str, Any], field: str, columns: Mapping[str, str] | None = None) -> str | None:
    """The path ``row`` holds ``field`` at (the one ``columns`` names, else the first of
    :data:`PLACES` it has), or None."""
    places = (columns[field],) if columns and field in columns else PLACES[field]
    return next((p for p in places if lookup(row, p) is not MISSING), None)


def fields(row: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The sample fields ``row`` holds, each from its place (see the module docstring);
    a field it does not hold is left out (:func:`verl_rewards.samples.as_samples` names it)."""
    if columns:
        return _fields_at(row, columns)
    # The flat layout and verl's, without a path lookup per field (``score`` reads every row here).
    found = {key: row[key] for key in _OWN if key in row}
    if "ground_truth" not in found:
        reward_model = row.get("reward_model")
        if isinstance(reward_model, Mapping) and "ground_truth" in reward_model:
            found["ground_truth"] = reward_model["ground_truth"]
    if "solution_str" not in found and "responses" in row:
        found["solution_str"] = row["responses"]
    return found


_OWN: Final = tuple(PLACES)  # each field's own column, the first of its places


def _fields_at(row: Mapping[str, Any], columns: Mapping[str, str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for field, places in PLACES.items():
        for path in (columns[field],) if field in columns else places:
            value = lookup(row, path)
            if value is not MISSING:
                found[field] = value
                break
    return found


def expand(row: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> Expansion:
    """``row``'s fields and, when its response is a list, the responses (one sample each)."""
    found = fields(row, columns)
    listed = listed_responses(found.get("solution_str"))
    if listed is None:
        return Expansion(found, None, None)
    return Expansion(found, listed, place_of(row, "solution_str", columns))


def listed_responses(value: Any) -> list[Any] | None:
    """``value`` as a list of responses when it is a list, tuple or array, else None."""
    if value is None or isinstance(value, (str, bytes, Mapping)):
        return None
    items = value.tolist() if callable(getattr(value, "tolist", None)) else value
    return list(items) if isinstance(items, (list, tuple)) else None

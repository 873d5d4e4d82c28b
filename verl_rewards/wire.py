"""JSON on every wire: values, samples, results and provenance to JSON and back.

One encoding for everything verl-rewards writes as JSON: ``score``'s JSONL rows, the
service's answers, :class:`~verl_rewards.RemoteScorer`'s requests and the results it
reads back, the run record beside an output. So the same sample gives the same JSON
from ``score``, from ``serve`` and through ``RemoteScorer``. A value a reward returns
(or a Parquet file holds) becomes plain JSON data:

==========================================  ==============================================
value                                       JSON
==========================================  ==============================================
NaN, an infinity (float, NumPy, torch)      ``null``
NumPy scalar or array, torch tensor         a number, or nested arrays (``tolist()``)
bytes, bytearray                            base64 text (as protobuf's JSON mapping does)
``Decimal``                                 its exact text
date, time, datetime                        ISO 8601 text
tuple, set, frozenset                       an array (a set's items sorted)
a mapping                                   an object, keys as text
a dataclass                                 an object of its fields
anything else                               its ``repr()`` text
==========================================  ==============================================

Values do not come back typed (an array comes back as a list); samples, results and
provenance do.
"""

from __future__ import annotations

import base64
import dataclasses
import decimal
import json
import math
from collections.abc import Mapping
from typing import Any

from .parsing import as_python
from .results import BatchResult, Provenance
from .samples import Sample


def dumps(value: Any, *, ascii: bool = False) -> str:
    """``value`` as JSON text, every value made plain (:func:`json_data`); ``ascii``: escape
    every non-ASCII character (the text is then valid in any encoding)."""
    try:  # the common case: plain data, finite numbers, string keys; json's own speed
        return json.dumps(value, allow_nan=False, default=json_data, ensure_ascii=ascii)
    except (ValueError, TypeError):  # NaN or an infinity, or a key JSON cannot hold
        return json.dumps(json_data(value), allow_nan=False, ensure_ascii=ascii)


def json_data(value: Any) -> Any:
    """``value`` as JSON data (see the module's table), through containers."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {_key(k): json_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_data(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (set, frozenset)):
        return _sorted([json_data(v) for v in value])
    if isinstance(value, decimal.Decimal):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    isoformat = getattr(value, "isoformat", None)  # dates and times
    if callable(isoformat):
        try:
            return isoformat()
        except (TypeError, ValueError):
            pass
    try:
        python = as_python(value)  # NumPy, pandas and torch values as lists and numbers
    except (TypeError, ValueError):
        python = value
    if python is not value:
        return json_data(python)
    item = getattr(value, "item", None)  # another library's scalar
    if callable(item):
        try:
            return json_data(item())
        except (TypeError, ValueError):  # e.g. .item() of a many-element array
            pass
    return repr(value)


def _key(key: Any) -> str:
    """An object key as JSON text, as ``json`` writes str, bool, None and number keys."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    value = json_data(key)
    return value if isinstance(value, str) else json.dumps(value)


def _sorted(items: list[Any]) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:  # mixed types: by their JSON text
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))


# -- records ------------------------------------------------------------------------------


def provenance_to_json(provenance: Provenance) -> dict[str, Any]:
    """A provenance record as JSON (a composite's components as objects)."""
    data = {f.name: getattr(provenance, f.name) for f in dataclasses.fields(provenance)
            if f.name != "components"}
    if provenance.components:
        data["components"] = [{"key": k, "weight": w, "provenance": provenance_to_json(p)}
                              for k, w, p in provenance.components]
    return data


def provenance_from_json(data: Mapping[str, Any]) -> Provenance:
    """The inverse of :func:`provenance_to_json`."""
    parts = tuple((c["key"], float(c["weight"]), provenance_from_json(c["provenance"]))
                  for c in data.get("components") or ())
    return Provenance(data["kind"], data["name"], data["display_name"], data.get("dist"),
                      data.get("version"), data.get("path"), data.get("source_hash"), parts)


def sample_to_json(sample: Sample) -> dict[str, Any]:
    """A sample as an input row (``data_source``, ``solution_str``, ``ground_truth``, and
    ``extra_info`` and ``prompt`` when it has them); :func:`verl_rewards.samples.as_samples`
    reads it back."""
    row: dict[str, Any] = {"data_source": sample.data_source, "solution_str": sample.solution_str,
                           "ground_truth": sample.ground_truth}
    if sample.extra_info is not None:
        row["extra_info"] = sample.extra_info
    if sample.prompt is not None:
        row["prompt"] = sample.prompt
    return row


def result_to_json(result: BatchResult) -> dict[str, Any]:
    """A batch result as the native protocol answers it (``POST /v1/score``)."""
    return {"scores": result.scores, "errors": result.errors, "statuses": result.statuses,
            "extra_info": result.extra_info, "provenance": provenance_to_json(result.provenance)}


def result_from_json(data: Mapping[str, Any], metrics: Mapping[str, float] | None = None) -> BatchResult:
    """The inverse of :func:`result_to_json` (with this side's ``metrics``)."""
    return BatchResult(scores=[float(s) for s in data["scores"]], errors=list(data["errors"]),
                       statuses=list(data["statuses"]), extra_info=dict(data["extra_info"]),
                       provenance=provenance_from_json(data["provenance"]), metrics=dict(metrics or {}))

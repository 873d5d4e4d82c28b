"""IFEval ground truth (``instruction_id_list`` and ``kwargs``) as validated records.

IFEval fills a missing or ``None`` kwarg with a random value; a reward must
not, so here a kwarg an instruction needs is required, and a bad row fails
its sample with a :class:`GroundTruthError` that names the instruction and
the kwarg.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from verl_rewards.parsing import as_python, json_mapping
from verl_rewards_ifeval.instructions import REGISTRY, RELATIONS, InstructionType, Param
from verl_rewards_ifeval.language import supported_languages


class GroundTruthError(ValueError):
    """The ground truth is not an IFEval row this reward can check."""


@dataclass(frozen=True)
class Instruction:
    """One instruction of a row: its type and its validated kwargs."""

    kind: InstructionType
    kwargs: Mapping[str, Any]


def parse_ground_truth(ground_truth: Any) -> tuple[Instruction, ...]:
    """The instructions of ``ground_truth`` (a mapping, or its JSON text)."""
    row = _as_mapping(ground_truth)
    ids = as_python(row.get("instruction_id_list"))
    if not isinstance(ids, (list, tuple)) or not ids or not all(isinstance(i, str) for i in ids):
        raise GroundTruthError(
            f"'instruction_id_list' must be a non-empty list of instruction ids, not {_show(ids)}"
        )
    all_kwargs = as_python(row.get("kwargs", None))
    if not isinstance(all_kwargs, (list, tuple)) or len(all_kwargs) != len(ids):
        raise GroundTruthError(
            f"'kwargs' must be a list of {len(ids)} mapping(s), one per instruction id, not {_show(all_kwargs)}"
        )
    return tuple(_instruction(index, id_, kw) for index, (id_, kw) in enumerate(zip(ids, all_kwargs)))


def _as_mapping(ground_truth: Any) -> Mapping[str, Any]:
    return json_mapping(
        ground_truth, "ground truth", "a mapping with 'instruction_id_list' and 'kwargs'", GroundTruthError
    )


def _instruction(index: int, id_: str, raw: Any) -> Instruction:
    kind = REGISTRY.get(id_)
    where = f"instruction {index} ({id_!r})"
    if kind is None:
        raise GroundTruthError(f"{where}: unknown instruction id; known ids: {', '.join(REGISTRY)}")
    raw = {} if raw is None else as_python(raw)
    if not isinstance(raw, Mapping):
        raise GroundTruthError(f"{where}: kwargs must be a mapping, not {_show(raw)}")
    given = {k: as_python(v) for k, v in raw.items() if not _is_missing(v)}  # None-valued: absent, as in IFEval
    expected = [p.name for p in kind.params]
    unknown = sorted(set(given) - set(expected))
    if unknown:
        raise GroundTruthError(
            f"{where}: unexpected kwarg(s) {unknown}; it takes {expected or 'none'}"
        )
    kwargs: dict[str, Any] = {}
    for param in kind.params:
        if param.name not in given:
            raise GroundTruthError(
                f"{where}: missing kwarg {param.name!r} (IFEval would draw it at random); it takes {expected}"
            )
        kwargs[param.name] = _value(where, param, given[param.name], kwargs)
    return Instruction(kind, kwargs)


def _value(where: str, param: Param, value: Any, earlier: Mapping[str, Any]) -> Any:
    """``value`` checked (and normalised) for ``param``; ``earlier`` holds the kwargs before it."""
    problem = f"{where}: kwarg {param.name!r}"
    if param.kind in ("count", "int", "index"):
        number = _integer(value)
        low = {"count": 0, "index": 1, "int": None}[param.kind]
        if number is None or (low is not None and number < low):
            need = "a whole number" + (f" >= {low}" if low is not None else "")
            raise GroundTruthError(f"{problem} must be {need}, not {_show(value)}")
        if param.kind == "index" and number > earlier["num_paragraphs"]:
            raise GroundTruthError(
                f"{problem} must be at most num_paragraphs ({earlier['num_paragraphs']}), not {number}"
            )
        return number
    if param.kind == "relation":
        if value not in RELATIONS:
            raise GroundTruthError(f"{problem} must be one of {list(RELATIONS)}, not {_show(value)}")
        return value
    if param.kind == "words":
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(w, str) for w in value):
            raise GroundTruthError(f"{problem} must be a non-empty list of strings, not {_show(value)}")
        return tuple(value)
    if param.kind == "letter":
        if not isinstance(value, str) or len(value) != 1:
            raise GroundTruthError(f"{problem} must be one character, not {_show(value)}")
        return value
    if param.kind == "language":
        if value not in supported_languages():
            raise GroundTruthError(
                f"{problem} must be a language code langdetect knows ({', '.join(supported_languages())}), "
                f"not {_show(value)}"
            )
        return value
    if not isinstance(value, str) or not value.strip():
        raise GroundTruthError(f"{problem} must be non-empty text, not {_show(value)}")
    return value if param.name == "first_word" else value.strip()  # IFEval strips all but first_word


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, Integral):
        return int(value)
    # Parquet turns an integer column with gaps into floats: 3.0 is 3.
    if isinstance(value, Real) and math.isfinite(value) and float(value).is_integer():
        return int(float(value))
    return None


def _is_missing(value: Any) -> bool:
    # None, and NaN (pandas' None in a numeric column).
    return value is None or (isinstance(value, float) and math.isnan(value))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."

"""Read the tests of a problem from its APPS/TACO-style ground truth."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple


class ProgramTest(NamedTuple):
    """One test: feed ``stdin`` and expect ``expected`` on stdout, or run ``assertion``.

    An assertion test runs the program, then the assertion line, under a
    harness that checks the assertion itself (see ``runs.prepare``).
    """

    stdin: str
    expected: str | None = None
    assertion: str | None = None


def parse_tests(ground_truth: str | bytes | Mapping[str, Any]) -> list[ProgramTest]:
    """Tests from ``{"inputs": [...], "outputs": [...], "asserts": [...]}`` (JSON text or a dict).

    Raises ``ValueError`` when the ground truth is malformed, holds no test, or
    describes an APPS/TACO call-based problem (``fn_name``: inputs are the
    arguments of a function, not stdin), which is not supported.
    """
    spec = _load(ground_truth)
    if spec.get("fn_name"):
        raise ValueError(
            f"ground truth names a function (fn_name={spec['fn_name']!r}): call-based APPS/TACO "
            "problems are not supported, only stdin/stdout pairs ('inputs'/'outputs') and 'asserts'"
        )
    inputs = _list_of_text(spec, "inputs")
    outputs = _list_of_text(spec, "outputs")
    if len(inputs) != len(outputs):
        raise ValueError(f"ground truth has {len(inputs)} inputs but {len(outputs)} outputs")
    tests = [ProgramTest(stdin, expected) for stdin, expected in zip(inputs, outputs)]
    tests += [ProgramTest("", None, line) for line in _list_of_text(spec, "asserts")]
    if not tests:
        raise ValueError("ground truth holds no test: expected 'inputs'/'outputs' or 'asserts'")
    return tests


def _load(ground_truth: str | bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(ground_truth, (str, bytes)):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError as e:
            raise ValueError(f"ground truth is not valid JSON: {e}") from e
    if not isinstance(ground_truth, Mapping):
        raise ValueError(f"ground truth must be a JSON object, not {type(ground_truth).__name__}")
    return ground_truth


def _list_of_text(spec: Mapping[str, Any], key: str) -> list[str]:
    values = spec.get(key) or []
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"ground truth {key!r} must be a list, not {type(values).__name__}")
    return [_as_text(v) for v in values]


def _as_text(value: Any) -> str:
    # APPS stores some inputs and outputs as lists of lines.
    if isinstance(value, (list, tuple)):
        return "\n".join(_as_text(v) for v in value)
    return value if isinstance(value, str) else str(value)

"""Read the tests of a problem from its APPS/TACO/LiveCodeBench-style ground truth."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from verl_rewards.parsing import json_mapping

CheckerLanguage = Literal["python", "cpp"]
CHECKER_LANGUAGES: tuple[CheckerLanguage, ...] = ("python", "cpp")


class Call(NamedTuple):
    """A call-based test: ``fn_name(*args)`` (a method of ``Solution()`` when the
    program defines ``class Solution``) must return ``expected``. ``wrapped``: the
    ground truth is in APPS's form, whose outputs wrap the value as ``[value]``
    (an expected one-element list then also accepts its element); False for the
    JSON-lines form of LiveCodeBench and ``prime_code``, whose outputs are the value."""

    fn_name: str
    args: list[Any]
    expected: Any
    wrapped: bool = True


class ProgramTest(NamedTuple):
    """One test: feed ``stdin`` and expect ``expected`` on stdout, run ``assertion``,
    or make a ``call``.

    Assertion and call tests run the program under a harness that makes the
    call or checks the assertion itself (see ``runs.prepare``).
    """

    stdin: str
    expected: str | None = None
    assertion: str | None = None
    call: Call | None = None


class Checker(NamedTuple):
    """A problem's special judge: a program of the dataset that decides each test."""

    language: CheckerLanguage
    source: str


class Problem(NamedTuple):
    """What a ground truth holds: the tests, and the checker that judges them (if any)."""

    tests: list[ProgramTest]
    checker: Checker | None = None


def parse_tests(ground_truth: str | bytes | Mapping[str, Any]) -> list[ProgramTest]:
    """The tests of a ground truth (see :func:`parse_problem`)."""
    return parse_problem(ground_truth).tests


def parse_problem(ground_truth: str | bytes | Mapping[str, Any]) -> Problem:
    """Tests from ``{"inputs": [...], "outputs": [...], "asserts": [...]}`` (JSON
    text or a dict), call tests when it names ``fn_name``, and its ``checker``.

    Raises ``ValueError`` when the ground truth is malformed or holds no test.
    """
    spec = _load(ground_truth)
    checker = _checker(spec.get("checker"))
    fn_name = spec.get("fn_name")
    if fn_name:
        tests = _call_tests(spec, fn_name)
    else:
        inputs = _list_of_text(spec, "inputs")
        outputs = _list_of_text(spec, "outputs")
        if checker is not None and not outputs:
            outputs = [""] * len(inputs)  # a checker may judge without expected outputs
        _same_length(inputs, outputs)
        tests = [ProgramTest(stdin, expected) for stdin, expected in zip(inputs, outputs)]
    tests += [ProgramTest("", None, line) for line in _list_of_text(spec, "asserts")]
    if not tests:
        raise ValueError("ground truth holds no test: expected 'inputs'/'outputs' or 'asserts'")
    return Problem(tests, checker)


def _load(ground_truth: str | bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    return json_mapping(ground_truth, "ground truth", "a mapping with 'inputs'/'outputs' or 'asserts'")


def _list(spec: Mapping[str, Any], key: str) -> Sequence[Any]:
    values = spec.get(key) or []
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"ground truth {key!r} must be a list, not {type(values).__name__}")
    return values


def _list_of_text(spec: Mapping[str, Any], key: str) -> list[str]:
    return [_as_text(v) for v in _list(spec, key)]


def _same_length(inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
    if len(inputs) != len(outputs):
        raise ValueError(f"ground truth has {len(inputs)} inputs but {len(outputs)} outputs")


def _as_text(value: Any) -> str:
    # APPS stores some inputs and outputs as lists of lines.
    if isinstance(value, (list, tuple)):
        return "\n".join(_as_text(v) for v in value)
    return value if isinstance(value, str) else str(value)


def _call_tests(spec: Mapping[str, Any], fn_name: Any) -> list[ProgramTest]:
    """Call tests in either form the evaluators read: APPS/TACO's (each input a
    list of arguments, each output the value, often wrapped as ``[value]``) or
    LiveCodeBench's and ``prime_code``'s (each input the arguments as JSON, one
    per line; each output the value as JSON text)."""
    if not isinstance(fn_name, str) or not fn_name.isidentifier():
        raise ValueError(f"ground truth 'fn_name' must be a Python identifier, not {fn_name!r}")
    inputs, outputs = _list(spec, "inputs"), _list(spec, "outputs")
    _same_length(inputs, outputs)
    tests = []
    for index, (arguments, expected) in enumerate(zip(inputs, outputs)):
        if isinstance(arguments, str):
            args = [_json(line, f"input {index}") for line in arguments.split("\n")]
            expected = _json(expected, f"output {index}") if isinstance(expected, str) else expected
        elif isinstance(arguments, (list, tuple)):
            args = list(arguments)
        else:
            raise ValueError(
                f"ground truth input {index} of a call-based problem must be a list of arguments "
                f"or JSON lines, not {type(arguments).__name__}"
            )
        apps_form = not isinstance(arguments, str)
        call = Call(fn_name, _int_keyed_first(args), _int_keyed_answer(expected), wrapped=apps_form)
        tests.append(ProgramTest("", None, None, call))
    return tests


def _json(text: Any, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise ValueError(f"ground truth {where} of a call-based problem is not valid JSON: {e}") from e


def _int_keys(value: Any) -> Any:
    """A dict whose keys all read as integers, with integer keys (JSON forces
    string keys; the APPS and ``prime_code`` evaluators undo it so)."""
    if type(value) is not dict:
        return value
    try:
        return {int(key): item for key, item in value.items()}
    except (TypeError, ValueError):
        return value


def _int_keyed_first(args: list[Any]) -> list[Any]:
    return [_int_keys(args[0]), *args[1:]] if args else args


def _int_keyed_answer(expected: Any) -> Any:
    if type(expected) is list and expected:
        return [_int_keys(expected[0]), *expected[1:]]
    return _int_keys(expected)


def _checker(value: Any) -> Checker | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"ground truth 'checker' must be an object, not {type(value).__name__}")
    language, source = value.get("language", "python"), value.get("source")
    if language not in CHECKER_LANGUAGES:
        raise ValueError(f"ground truth checker language must be one of {', '.join(CHECKER_LANGUAGES)}, not {language!r}")
    if not isinstance(source, str) or not source.strip():
        raise ValueError("ground truth 'checker' needs its program as text in 'source'")
    unknown = sorted(set(value) - {"language", "source"})
    if unknown:
        raise ValueError(f"ground truth 'checker' has unknown key(s) {unknown}: expected 'language' and 'source'")
    return Checker(language, source)

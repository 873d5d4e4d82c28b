"""Call-based problems (APPS/TACO, LiveCodeBench, prime_code): the harness calls the function, the scorer compares."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.compare import returns_match
from verl_rewards_code.outcome import status_of
from verl_rewards_code.runs import call_answer, prepare
from verl_rewards_code.sandbox import Limits, RunResult
from verl_rewards_code.spec import Call, ProgramTest, parse_problem, parse_tests

APPS_ADD = {"fn_name": "add", "inputs": [[1, 2], [-1, 1]], "outputs": [[3], [0]]}
LCB_ADD = {"fn_name": "add", "inputs": ["1\n2", "-1\n1"], "outputs": ["3", "0"]}


def score(program: str, truth: Any = APPS_ADD, **kwargs: Any) -> tuple[float, str]:
    result = compute_score("apps", textwrap.dedent(program), json.dumps(truth), None, **kwargs)
    return result["score"], result["test_statuses"]


# ------------------------------------------------------------------ reading


def test_apps_and_livecodebench_forms_become_the_same_call_tests() -> None:
    assert parse_tests(APPS_ADD) == [
        ProgramTest("", None, None, Call("add", [1, 2], [3])),
        ProgramTest("", None, None, Call("add", [-1, 1], [0])),
    ]
    assert parse_tests(LCB_ADD) == [
        ProgramTest("", None, None, Call("add", [1, 2], 3, wrapped=False)),
        ProgramTest("", None, None, Call("add", [-1, 1], 0, wrapped=False)),
    ]


def test_json_string_keys_that_read_as_integers_become_integers() -> None:
    # As APPS's and prime_code's evaluators undo JSON's string keys (first argument, expected value).
    truth = {"fn_name": "f", "inputs": ['{"1": "a"}\n{"x": 1}'], "outputs": ['{"2": 3}']}
    assert parse_tests(truth)[0].call == Call("f", [{1: "a"}, {"x": 1}], {2: 3}, wrapped=False)
    assert parse_tests({"fn_name": "f", "inputs": [[{"k": 1}]], "outputs": [[{"7": 1}]]})[0].call == Call(
        "f", [{"k": 1}], [{7: 1}]
    )


def test_asserts_combine_with_call_tests() -> None:
    tests = parse_tests({**APPS_ADD, "asserts": ["assert add(2, 2) == 4"]})
    assert [t.call is not None for t in tests] == [True, True, False]


@pytest.mark.parametrize(
    ("truth", "message"),
    [
        ({"fn_name": "a-b", "inputs": [[1]], "outputs": [1]}, "must be a Python identifier"),
        ({"fn_name": 3, "inputs": [[1]], "outputs": [1]}, "must be a Python identifier"),
        ({"fn_name": "f", "inputs": [[1]], "outputs": []}, "1 inputs but 0 outputs"),
        ({"fn_name": "f", "inputs": ["1\n{"], "outputs": ["1"]}, "input 0 of a call-based problem is not valid JSON"),
        ({"fn_name": "f", "inputs": ["1"], "outputs": ["nope"]}, "output 0 of a call-based problem is not valid JSON"),
        ({"fn_name": "f", "inputs": [5], "outputs": [1]}, "must be a list of arguments or JSON lines, not int"),
        ({"fn_name": "f", "inputs": [], "outputs": []}, "holds no test"),
    ],
)
def test_malformed_call_problems_are_errors(truth: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_problem(truth)


# ------------------------------------------------------- the comparison rule


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (3, 3),
        (3, [3]),  # APPS wraps the value in a one-element list
        ([1, 2], [[1, 2]]),
        ((1, 2), [1, 2]),  # tuples count as lists: JSON has none
        ([(1, 2), (3, 4)], [[1, 2], [3, 4]]),
        ([(1, 2)], [[[1, 2]]]),
        ({"a": (1,)}, {"a": [1]}),
        (1, 1.0),  # Python ==, as the evaluators compare
        (True, 1),
        ({1: "a"}, {1: "a"}),
        ("abc", ["abc"]),
    ],
)
def test_return_values_the_evaluators_accept(returned: Any, expected: Any) -> None:
    assert returns_match(returned, expected)


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (4, 3),
        (0.30000000000000004, 0.3),  # no float tolerance, as in APPS, prime_code and LiveCodeBench
        (1, [1, 2]),  # only a one-element list unwraps (prime_code also takes 1 here)
        ([3], 3),
        ("3", 3),
        ({"1": "a"}, {1: "a"}),
        ({1, 2}, [1, 2]),
        (None, []),
        (float("nan"), float("nan")),
    ],
)
def test_return_values_the_rule_rejects(returned: Any, expected: Any) -> None:
    assert not returns_match(returned, expected)


# ------------------------------------------------ what the harness writes back


def test_a_call_test_runs_the_harness_with_the_arguments_and_never_the_expected_value() -> None:
    test = ProgramTest("", None, None, Call("add", [1, {2: 3}], "SECRET-EXPECTED"))
    run = prepare(test, "def add(a, b):\n    return a\n")
    assert run.helper_processes == 1 and run.sentinel is not None
    assert "SECRET-EXPECTED" not in run.stdin
    first_size, rest = run.stdin.split("\n", 1)
    first = json.loads(rest[: int(first_size)])
    assert first == {"program": "def add(a, b):\n    return a\n", "module": "solution", "prelude": True}


@pytest.mark.parametrize(
    ("stdout", "found", "value"),
    [
        ('\n{"t": [1, 2]}\nNONCE\n', True, (1, 2)),
        ('\n{"l": [1, {"d": [[2, "x"]]}]}\nNONCE\n', True, [1, {2: "x"}]),
        ('{"s": [1]}\nNONCE\n', True, {1}),
        ("\n[1, 2]\nNONCE\n", False, None),  # untagged: not what the harness writes
        ("\n3\nNONCE", False, None),
        ("\nnot json\nNONCE\n", False, None),
        ('\n{"h": [0, "Foo"]}\nNONCE\n', False, None),
        ("\n3\nNONCE\nmore\n", False, None),
    ],
)
def test_the_value_is_read_from_the_line_before_the_nonce(stdout: str, found: bool, value: Any) -> None:
    assert call_answer(stdout, "NONCE") == (found, value)


CALL = ProgramTest("", None, None, Call("add", [1, 2], [3]))


@pytest.mark.parametrize(
    ("result", "status"),
    [
        (RunResult("\n3\nNONCE\n", "", exit_code=0), "pass"),
        (RunResult("\n4\nNONCE\n", "", exit_code=0), "fail"),
        (RunResult("", "", exit_code=0), "fail"),
        (RunResult("3\n", "", exit_code=0), "fail"),
        (RunResult("", "Traceback\nValueError: x\n", exit_code=1), "error"),
        (RunResult("", "\nAssertionError: the function returned the program's Foo\n", exit_code=1), "fail"),
        (RunResult("", "", timed_out=True), "timeout"),
    ],
)
def test_status_of_a_call_run(result: RunResult, status: str) -> None:
    assert status_of(result, CALL, Limits(timeout_s=2.0), "NONCE") == status


# ------------------------------------------------------- end to end, real runs


def test_a_correct_function_passes_and_a_wrong_one_fails_in_both_forms() -> None:
    right, wrong = "def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a * b\n"
    assert score(right) == score(right, LCB_ADD) == (1.0, "pass,pass")
    assert score(wrong) == score(wrong, LCB_ADD) == (0.0, "fail,fail")


def test_a_leetcode_solution_class_is_called_through_an_instance_with_the_evaluators_prelude() -> None:
    program = """
        class Solution:
            def twoSum(self, nums: List[int], target: int) -> List[int]:
                seen = defaultdict(int)
                for i, x in enumerate(nums):
                    if target - x in seen:
                        return [seen[target - x], i]
                    seen[x] = i
        """
    truth = {"fn_name": "twoSum", "inputs": ["[2, 7, 11, 15]\n9", "[3, 2, 4]\n6"], "outputs": ["[0, 1]", "[1, 2]"]}
    assert score(program, truth) == (1.0, "pass,pass")
    assert score(program.replace("[seen[target - x], i]", "(seen[target - x], i)"), truth) == (1.0, "pass,pass")
    assert score(program.replace("return [", "return [9, "), truth) == (0.0, "fail,fail")


def test_a_main_block_does_not_run_in_a_call_test() -> None:
    program = "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    print(add(*map(int, input().split())))\n"
    assert score(program) == (1.0, "pass,pass")


def test_crashing_slow_and_missing_functions_score_nothing() -> None:
    assert score("def add(a, b):\n    raise ValueError('no')\n") == (0.0, "error,error")
    assert score("def plus(a, b):\n    return a + b\n") == (0.0, "error,error")
    assert score("import time\ndef add(a, b):\n    time.sleep(60)\n", timeout_s=0.5,
                 stop_on_first_failure=True) == (0.0, "timeout,skipped")
    assert score("raise SystemExit(3)\ndef add(a, b):\n    return a + b\n") == (0.0, "error,error")


def test_an_object_that_claims_equality_cannot_pass_a_call(equality_forgery: str) -> None:
    assert score(equality_forgery) == (0.0, "fail,fail")


@pytest.mark.parametrize(
    "program",
    [
        """
        import ctypes, gc
        def add(a, b):
            # patch int.__eq__ in the program's own process: the harness compares in its own
            for obj in gc.get_referents(int.__dict__):
                if isinstance(obj, dict):
                    obj["__eq__"] = lambda self, other: True
            return 7
        """,
        "import os\ndef add(a, b):\n    os._exit(0)\n",
        "import os\nos._exit(0)\n",
        "print('\\n3\\ncode_exec-assertion-held-' + '0' * 32)\ndef add(a, b):\n    return 7\n",
    ],
    ids=["patched __eq__", "os._exit in the call", "os._exit at import", "printed verdict"],
)
def test_a_call_cannot_be_forged(program: str) -> None:
    assert score(program)[0] == 0.0


def test_stop_iteration_from_the_called_function_is_an_error_not_a_value() -> None:
    assert score("def add(a, b):\n    raise StopIteration\n") == (0.0, "error,error")


# --------------------------------------- APPS's wrapping only in APPS's form (issue 33, item 3)


def test_a_one_element_list_is_unwrapped_only_for_apps_form() -> None:
    assert returns_match(1, [1]) and returns_match(1, [1], wrapped=True)
    assert not returns_match(1, [1], wrapped=False)
    assert returns_match([1], [1], wrapped=False) and returns_match((1,), [1], wrapped=False)


def test_a_bare_value_where_json_lines_want_a_list_fails() -> None:
    # LiveCodeBench's and prime_code's outputs are the value itself: "[1]" is a list.
    bare, listed = "def f(x):\n    return x\n", "def f(x):\n    return [x]\n"
    json_lines = {"fn_name": "f", "inputs": ["1", "2"], "outputs": ["[1]", "[2]"]}
    assert score(bare, json_lines) == (0.0, "fail,fail")
    assert score(listed, json_lines) == (1.0, "pass,pass")
    # APPS's form wraps the value: both are accepted there, as APPS's evaluator does.
    apps = {"fn_name": "f", "inputs": [[1], [2]], "outputs": [[1], [2]]}
    assert score(bare, apps) == score(listed, {**apps, "outputs": [[[1]], [[2]]]}) == (1.0, "pass,pass")


# ---------------------------------------- library values (issue 33, item 2)

LIBRARY_RETURNS = [
    ("Counter", "from collections import Counter\ndef f(s):\n    return Counter(s)\n", '"aab"', '{"a": 2, "b": 1}'),
    ("defaultdict", "from collections import defaultdict\ndef f(s):\n    d = defaultdict(int)\n"
     "    for c in s:\n        d[c] += 1\n    return d\n", '"aab"', '{"a": 2, "b": 1}'),
    ("OrderedDict", "from collections import OrderedDict\ndef f(s):\n    return OrderedDict((c, s.count(c)) for c in s)\n",
     '"aab"', '{"a": 2, "b": 1}'),
    ("namedtuple", "from collections import namedtuple\nP = namedtuple('P', 'lo hi')\ndef f(s):\n"
     "    return P(min(s), max(s))\n", '"aab"', '["a", "b"]'),
    ("NumPy int64", "import numpy as np\ndef f(s):\n    return np.int64(len(s))\n", '"aab"', "3"),
    ("NumPy float64", "import numpy as np\ndef f(s):\n    return np.float64(len(s)) / 2\n", '"aab"', "1.5"),
    ("Counter by the prelude", "def f(s):\n    return Counter(s)\n", '"aab"', '{"a": 2, "b": 1}'),
]


@pytest.mark.parametrize(("program", "argument", "expected"), [r[1:] for r in LIBRARY_RETURNS],
                         ids=[r[0] for r in LIBRARY_RETURNS])
def test_library_values_are_returned_as_their_plain_value(program: str, argument: str, expected: str) -> None:
    assert score(program, {"fn_name": "f", "inputs": [argument], "outputs": [expected]}) == (1.0, "pass")
    assert score(program, {"fn_name": "f", "inputs": [argument], "outputs": ["null"]}) == (0.0, "fail")


def test_a_counter_subclass_that_forges_equality_cannot_pass_a_call() -> None:
    program = """
        class C(Counter):
            def __eq__(self, other):
                return True
            __hash__ = None
        def f(s):
            return C()
        """
    assert score(program, {"fn_name": "f", "inputs": ['"aab"'], "outputs": ['{"a": 2, "b": 1}']}) == (0.0, "fail")

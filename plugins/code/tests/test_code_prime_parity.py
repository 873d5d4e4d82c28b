"""Parity with verl 0.9.1's ``prime_code``: its own ``compute_score`` (as verl calls it) and ``code_exec`` on the same samples.

``prime_code``'s three files are loaded from the installed verl as a package
of their own, not through ``import verl`` (whose ``__init__`` imports torch and
takes half a minute): the same code, run as verl runs it. Every sample is
judged alike, except the deliberate differences listed in the README (one
test each, asserting the difference).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from verl_rewards_code.code_exec import compute_score


@pytest.fixture(scope="module")
def prime_code() -> Iterator[ModuleType]:
    verl = importlib.util.find_spec("verl")
    assert verl is not None and verl.submodule_search_locations, "verl is installed in the test environment"
    folder = Path(next(iter(verl.submodule_search_locations))) / "utils" / "reward_score" / "prime_code"
    name = "verl_prime_code_as_installed"
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]


def fenced(program: str) -> str:
    return f"Here is my solution.\n```python\n{program}```\n"


def prime_score(prime_code: ModuleType, program: str, tests: dict[str, Any]) -> float:
    # As verl's default_compute_score calls it (continuous=False raises on any failure in verl 0.9.1).
    success, _ = prime_code.compute_score(fenced(program), json.dumps(tests), continuous=True)
    return float(success)


def our_score(program: str, tests: dict[str, Any]) -> float:
    result = compute_score("taco", fenced(program), json.dumps(tests), None)
    return float(result["score"])


ADD = {"fn_name": "add", "inputs": ["1\n2", "-4\n4"], "outputs": ["3", "0"]}
PAIRS = {"fn_name": "pairs", "inputs": ["3"], "outputs": ["[[0, 1], [1, 2]]"]}
STDIN = {"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]}
COUNT = {"fn_name": "f", "inputs": ['"aab"'], "outputs": ['{"a": 2, "b": 1}']}

SAMPLES = [
    ("call: right", "def add(a, b):\n    return a + b\n", ADD, 1.0),
    ("call: wrong", "def add(a, b):\n    return a - b\n", ADD, 0.0),
    ("call: crashing", "def add(a, b):\n    return a / 0\n", ADD, 0.0),
    ("call: LeetCode class", "class Solution:\n    def add(self, a: int, b: int) -> int:\n        return sum([a, b])\n",
     ADD, 1.0),
    ("call: a tuple for a list", "def pairs(n):\n    return tuple([i, i + 1] for i in range(n - 1))\n", PAIRS, 1.0),
    ("call: no float tolerance", "def f(x):\n    return x + 0.2\n",
     {"fn_name": "f", "inputs": ["0.1"], "outputs": ["0.3"]}, 0.0),
    ("call: integer dict keys", "def count(s):\n    return {len(s): s}\n",
     {"fn_name": "count", "inputs": ['"ab"'], "outputs": ['{"2": "ab"}']}, 1.0),
    ("call: main block not run", "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    add(*input())\n",
     ADD, 1.0),
    ("stdin: right", "a, b = map(int, input().split())\nprint(a + b)\n", STDIN, 1.0),
    ("stdin: wrong", "a, b = map(int, input().split())\nprint(a * b)\n", STDIN, 0.0),
    ("stdin: half right", "a, b = map(int, input().split())\nprint(a + b if a < 5 else 0)\n", STDIN, 0.5),
    ("stdin: crashing", "a, b = map(int, input().split())\nprint(a // 0)\n", STDIN, 0.0),
    ("stdin: trailing spaces", "a, b = map(int, input().split())\nprint(a + b, '  ')\n", STDIN, 1.0),
    ("stdin: float close", "print(1 / 3)\n", {"inputs": [""], "outputs": ["0.33333333\n"]}, 1.0),
    ("stdin: an integer in another spelling", "print('1000000.0')\n", {"inputs": [""], "outputs": ["1000000\n"]},
     1.0),
    # Issue 33, item 2: library types compare equal in prime_code (and MBPP, APPS); their plain value here.
    ("call: a Counter", "def f(s):\n    return Counter(s)\n", COUNT, 1.0),
    ("call: a defaultdict", "def f(s):\n    d = defaultdict(int)\n    for c in s:\n        d[c] += 1\n    return d\n",
     COUNT, 1.0),
    ("call: an OrderedDict", "def f(s):\n    return OrderedDict((c, s.count(c)) for c in s)\n", COUNT, 1.0),
    ("call: a namedtuple", "P = namedtuple('P', 'lo hi')\ndef f(s):\n    return P(min(s), max(s))\n",
     {**COUNT, "outputs": ['["a", "b"]']}, 1.0),
    ("call: a wrong Counter", "def f(s):\n    return Counter(s[1:])\n", COUNT, 0.0),
]


@pytest.mark.parametrize(("name", "program", "tests", "expected"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_prime_code_and_code_exec_score_alike(
    prime_code: ModuleType, name: str, program: str, tests: dict[str, Any], expected: float
) -> None:
    assert (prime_score(prime_code, program, tests), our_score(program, tests)) == (expected, expected)


DIFFERENCES = [
    # prime_code re-runs a failed problem test by test without its fn_name: a call-based problem scores 1 or 0.
    ("partial credit on a call-based problem", "def add(a, b):\n    return a + b if a > 0 else 99\n", ADD, (0.0, 0.5)),
    # prime_code also takes the first element of any expected list: 1 passes for [1, 2].
    ("first element of a longer list", "def f(n):\n    return 1\n",
     {"fn_name": "f", "inputs": ["2"], "outputs": ["[1, 2]"]}, (1.0, 0.0)),
    # prime_code turns only a top-level tuple into a list (and a list of tuples, against a wrapped value).
    ("nested tuples", "def pairs(n):\n    return [(i, i + 1) for i in range(n - 1)]\n", PAIRS, (0.0, 1.0)),
    # prime_code finds a function the program never defined among its prelude's imports (math.gcd).
    ("function from the prelude", "pass\n", {"fn_name": "gcd", "inputs": ["4\n6"], "outputs": ["2"]}, (1.0, 0.0)),
    # prime_code runs stdin programs after the same prelude; code_exec runs them as they are.
    ("stdin program using an unimported name", "q = deque([int(input())])\nprint(q[0])\n",
     {"inputs": ["7\n"], "outputs": ["7\n"]}, (1.0, 0.0)),
    # prime_code reads call inputs only as JSON lines; APPS/TACO's lists of arguments fail there.
    ("APPS lists of arguments", "def add(a, b):\n    return a + b\n",
     {"fn_name": "add", "inputs": [[1, 2]], "outputs": [[3]]}, (0.0, 1.0)),
    # Issue 33, item 3: prime_code's outputs are the value (JSON lines), never wrapped, yet it takes
    # the first item of an expected list: 3 passes for [3]. code_exec unwraps only APPS's form.
    ("a bare value for a one-element list", "def add(a, b):\n    return a + b\n",
     {**ADD, "outputs": ["[3]", "[0]"]}, (1.0, 0.0)),
    # Issue 33, item 1: prime_code compares a number with numpy's allclose (relative 1e-5), also
    # against an integer; code_exec matches an expected integer only by its exact value.
    ("a non-integer for an integer", "print(999999.5)\n", {"inputs": [""], "outputs": ["1000000\n"]}, (1.0, 0.0)),
    ("a float for a 30-digit integer", "print(float(123456789012345678901234567890))\n",
     {"inputs": [""], "outputs": ["123456789012345678901234567890\n"]}, (1.0, 0.0)),
    # NumPy scalars fail in prime_code: `value == expected` is a numpy.bool_, which its `is True` check
    # rejects (and json.dumps, for its report, raises on numpy.int64); code_exec compares their plain value.
    ("a NumPy int64", "import numpy as np\ndef f(s):\n    return np.int64(len(s))\n",
     {**COUNT, "outputs": ["3"]}, (0.0, 1.0)),
    ("a NumPy float64", "import numpy as np\ndef f(s):\n    return np.float64(len(s)) / 2\n",
     {**COUNT, "outputs": ["1.5"]}, (0.0, 1.0)),
]


@pytest.mark.parametrize(("name", "program", "tests", "scores"), DIFFERENCES, ids=[d[0] for d in DIFFERENCES])
def test_the_deliberate_differences_from_prime_code(
    prime_code: ModuleType, name: str, program: str, tests: dict[str, Any], scores: tuple[float, float]
) -> None:
    assert (prime_score(prime_code, program, tests), our_score(program, tests)) == scores

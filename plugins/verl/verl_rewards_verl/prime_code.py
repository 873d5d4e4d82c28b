# Copyright 2024 PRIME team and/or its affiliates
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# The scoring rule of verl 0.9.1's prime_code.compute_score(..., continuous=True)
# (verl/utils/reward_score/prime_code/__init__.py) and the import preamble of
# its run_test (testing_util.py). Changed by verl-rewards: the programs run in
# verl-rewards-code's sandbox (code_exec), as programs, instead of exec'd in a
# forked process that only patches a few os functions; see the README for
# what that changes.
"""codecontests, apps, codeforces, taco: verl's prime_code score, each test run by ``code_exec``.

verl's rule (``continuous=True``): all tests at once (5 s each); 1.0 when all
pass; else each of the first 10 tests alone (10 s each) and the fraction that
pass. The first phase can only say 1.0 where the second would too, so the
score is the fraction of the first ``min(10, n)`` tests passed. A call-based
problem (``fn_name``) is all or nothing: verl's second phase drops ``fn_name``
and runs the function's source as a stdin program, which prints nothing.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Mapping
from typing import Any

from verl_rewards_code.code_exec import compute_score as code_exec

from verl_rewards.parsing import json_mapping

FIRST_TESTS = 10
STDIN_TIMEOUT_S = 10.0  # each test of verl's second phase
CALL_TIMEOUT_S = 5.0  # each test of verl's first phase
# The sample's tests may take as long as verl's (10 tests of 10 s): verl_default's declared
# 120 s, less what code_exec keeps back for scoring.
TIME_BUDGET_S = 115.0
# What run_test puts before every program, in this order (so `sqrt`, `defaultdict`,
# `heappush`... need no import, and recursion may go 600,000 deep).
STAR_IMPORTS = (
    "string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
    "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing",
)
MODULE_IMPORTS = (
    "string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
    "itertools", "functools", "operator", "io", "sys", "json",
)
RECURSION_LIMIT = "sys.setrecursionlimit(6*10**5)\n"
_IDENTIFIER = re.compile(r"[^\W\d]\w*")


@functools.cache
def _exported(module: str) -> frozenset[str]:
    """The names ``from module import *`` binds."""
    namespace = vars(importlib.import_module(module))
    names = namespace.get("__all__")
    return frozenset(names if names is not None else (n for n in namespace if not n.startswith("_")))


def preamble(program: str) -> str:
    """verl's preamble, keeping only the lines that bind a name the program mentions.

    Lines keep their order, and a line is kept when any name it binds occurs in the
    program, so every name the program uses is bound as the whole preamble binds it
    (each module that exports it is imported, the last one wins); the rest would only
    cost import time in every run (about 25 ms of CPU for all of them).
    """
    words = set(_IDENTIFIER.findall(program))
    lines = [f"from {m} import *\n" for m in STAR_IMPORTS if not words.isdisjoint(_exported(m))]
    lines += [f"import {m}\n" for m in MODULE_IMPORTS if m in words or m == "sys"]
    return "".join(lines) + RECURSION_LIMIT


def extract_solution(completion: str) -> str:
    """verl's extraction: after the last `` ```python ``, up to the next fence (the text before
    the first fence when there is no `` ```python ``)."""
    return completion.split("```python")[-1].split("```")[0]


def load_tests(ground_truth: Any) -> dict[str, Any]:
    """The ground truth as a mapping with ``inputs`` and ``outputs`` lists (JSON text or a mapping)."""
    spec = json_mapping(ground_truth, "code ground truth", '{"inputs": [...], "outputs": [...]}')
    inputs, outputs = spec.get("inputs"), spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise ValueError("code ground truth needs 'inputs' and 'outputs' lists")
    if len(inputs) != len(outputs):
        raise ValueError(f"code ground truth has {len(inputs)} inputs but {len(outputs)} outputs")
    if not inputs:
        raise ValueError("code ground truth holds no test (verl scores every response 1.0 there)")
    return dict(spec)


def compute_score(solution_str: str, ground_truth: Any, code_options: Mapping[str, Any] | None = None) -> float:
    """The fraction of the first 10 tests passed (stdin/stdout); 1.0 or 0.0 (call-based)."""
    spec = load_tests(ground_truth)
    solution = extract_solution(solution_str)
    # Only the score is kept: code_exec need not explain failing tests.
    options: dict[str, Any] = {"compare": "prime_code", "time_budget_s": TIME_BUDGET_S, "explain": "none"}
    if spec.get("fn_name"):
        # verl's preamble may bind the function itself (`gcd` from `from math import *`).
        program = preamble(f"{solution} {spec['fn_name']}") + solution
        tests = {key: spec[key] for key in ("fn_name", "inputs", "outputs")}
        options.update(timeout_s=CALL_TIMEOUT_S, all_or_nothing=True)
    else:
        program = preamble(solution) + solution
        tests = {"inputs": spec["inputs"][:FIRST_TESTS], "outputs": spec["outputs"][:FIRST_TESTS]}
        options.update(timeout_s=STDIN_TIMEOUT_S)
    result = code_exec("", program, tests, None, **{**options, **(code_options or {})})
    return float(result["score"])

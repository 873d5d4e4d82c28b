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
# The stdin/stdout comparison of verl 0.9.1's prime_code (run_test in
# verl/utils/reward_score/prime_code/testing_util.py, from the APPS metric).
# Changed by verl-rewards: only the checks that can succeed are kept (its last
# one compares a list of lines with a list of sets and never holds); numpy's
# allclose is written out; types.
"""verl's ``prime_code`` rules for stdin/stdout and call-based answers (``compare="prime_code"``)."""

from __future__ import annotations

import math
from typing import Any

# numpy.allclose's defaults, which prime_code uses
RTOL, ATOL = 1e-05, 1e-08


def prime_code_match(stdout: str, expected: str) -> bool:
    """Whether prime_code passes this output: the whole output (or its lines, each
    stripped) equals the expected text up to surrounding whitespace; or its lines
    equal the expected text's non-empty lines (stripped); or every line is a
    number within numpy's ``allclose`` of the expected line (unless both sides
    are all digit strings)."""
    output = stdout.splitlines()
    if "\n".join(output).strip() == expected.strip():
        return True
    if "\n".join(o.strip() for o in output).strip() == expected.strip():
        return True
    if output == [expected]:
        return True
    wanted = [line.strip() for line in expected.split("\n") if line]
    if output == wanted:
        return True
    output = [line for line in output if line]
    if output == wanted:
        return True
    return _numbers_close(output, wanted)


def _is_int_text(value: str) -> bool:
    return value.isdigit()


def _numbers_close(output: list[str], wanted: list[str]) -> bool:
    # prime_code's all(...) over zip(strict=True) stops at the first pair that is
    # not two digit strings; only when every pair is does a length difference raise
    # (and the check is skipped).
    for got, want in zip(output, wanted):
        if not (_is_int_text(got) and _is_int_text(want)):
            break
    else:
        return False  # all digit strings (or a length mismatch): no float comparison
    try:
        got_floats = [float(e) for e in output]
        want_floats = [float(e) for e in wanted]
    except ValueError:
        return False
    return len(got_floats) == len(want_floats) and all(map(_allclose, got_floats, want_floats))


def _allclose(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= ATOL + RTOL * abs(b)


def prime_code_returns_match(returned: Any, expected: Any) -> bool:
    """Whether prime_code passes this return value of a call-based test: a top-level tuple
    counts as a list; equal to the expected value, or to the first item of an expected
    non-empty list (of any length); or, returned a list of tuples, as lists equal to that
    first item. Python ``==``, no float tolerance."""
    output = list(returned) if isinstance(returned, tuple) else returned
    result = output == expected
    if isinstance(expected, list) and expected:
        result = result or output == expected[0]
    try:
        if isinstance(output[0], tuple):
            result = result or [list(x) for x in output] == expected[0]
    except Exception:  # noqa: BLE001 - prime_code's rule: no first item, no such match
        pass
    return bool(result)

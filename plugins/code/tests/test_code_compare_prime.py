"""code_exec's ``compare`` option: ``prime_code`` judges stdin/stdout tests by verl's rule.

(The rule itself is held to verl's own run_test, pair by pair, in
plugins/verl/tests/test_prime_code_compare.py.)
"""

from __future__ import annotations

import json

import pytest
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.compare_prime import prime_code_match

# For "3": an output within numpy's allclose (verl passes it, the token rule does not), a
# zero-padded one and a spaced one (the token rule passes them, verl does not).
TRUTH = {"inputs": ["3.0\n", "0\n", "3 \n"], "outputs": ["3\n", "3\n", "3 4\n"]}


@pytest.mark.parametrize(("compare", "statuses"), [
    ("prime_code", "pass,fail,fail"),
    ("tokens", "fail,pass,pass"),
])
def test_the_compare_option_chooses_the_stdout_rule(compare: str, statuses: str) -> None:
    program = "```python\nprint({'3.0': '3.00002', '0': '03', '3': '3  4'}[input().strip()])\n```"
    result = compute_score("apps", program, json.dumps(TRUTH), None, compare=compare)
    assert result["test_statuses"] == statuses


def test_an_unknown_compare_rule_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"^compare must be 'tokens' or 'prime_code', not 'exact'$"):
        compute_score("apps", "print(3)", json.dumps(TRUTH), None, compare="exact")  # type: ignore[arg-type]


@pytest.mark.parametrize(("stdout", "expected", "verdict"), [
    ("3\n", "3", True), ("  3  \n\n", "3\n", True), ("3.00002\n", "3\n", True), ("3.0001\n", "3\n", False),
    ("03\n", "3\n", False), ("1\n2\n", "1\n\n2\n", True), ("1 2\n", "1  2\n", False), ("inf\n", "inf\n", True),
    ("nan\n", "nan\n", True), ("nan\n", "NaN\n", False), ("", "", True), ("1\n2\n", "1\n", False),
])
def test_prime_code_rule_examples(stdout: str, expected: str, verdict: bool) -> None:
    assert prime_code_match(stdout, expected) is verdict

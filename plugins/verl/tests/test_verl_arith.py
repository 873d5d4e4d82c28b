"""arith.evaluate: eval's value on arithmetic, nothing run, no integer computed past 2**20 bits."""

from __future__ import annotations

import pytest
from verl_rewards_verl import arith


@pytest.mark.parametrize("text", [
    "1", " 1+2", "\t2*3.5", "7/2", "7//2", "-7%3", "2**10", "2**-1", "2**0.5", "(1, 2.5)", "[1, [2, 3]]", "{1, 2}",
    "1*3.141592653589793", "2*3.14*3.14", "1 < 2 <= 2", "3 > 4", "1 == 1.0", "~5", "not 0", "6 & 3 | 8 ^ 1",
    "1e308*10", "1j*2", "(-8)**(1/3)", "True + 1", "()", "[]", "((((1))))", "1_000", "0x1F", "-(-(-1))",
])
def test_arithmetic_evaluates_as_eval_does(text: str) -> None:
    assert arith.evaluate(text) == eval(text)


@pytest.mark.parametrize(("text", "error"), [
    ("1/0", ZeroDivisionError), ("10**400*1.0", OverflowError), ("2.0**5000", OverflowError),
    ("1 +", SyntaxError), (" 1\n+", SyntaxError), ("1" + "+1" * 10_000, RecursionError),
])
def test_what_eval_rejects_raises_the_same_error(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        eval(text)
    with pytest.raises(error):
        arith.evaluate(text)


@pytest.mark.parametrize("text", [
    "x", "abs(-1)", "math.pi", "__import__('os').getpid()", "open('f').read()", "'a' * 3", "[1] * 3", "(1, 2) + (3,)",
    "lambda: 1", "[x for x in (1,)]", "{'a': 1}", "(1).real", "[1][0]", "1 << 3", "f'{1}'", "1 if 1 else 2",
])
def test_anything_but_arithmetic_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"^not evaluated: "):
        arith.evaluate(text)


@pytest.mark.parametrize("text", ["9**9**9", "2**(2**21)", "(10**200000)*(10**200000)", "-3**2000000"])
def test_huge_integers_are_refused_before_they_are_computed(text: str) -> None:
    with pytest.raises(OverflowError, match="not computed"):
        arith.evaluate(text)


def test_a_long_chain_is_evaluated_without_recursion() -> None:
    assert arith.evaluate("+".join(["1"] * 500)) == 500 == eval("+".join(["1"] * 500))

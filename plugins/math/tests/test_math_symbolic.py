"""The symbolic fallback: its deadline holds, and math-verify is used only when installed."""

from __future__ import annotations

import time

import pytest
from verl_rewards_math import equivalence, symbolic
from verl_rewards_math.equivalence import Options, equivalent
from verl_rewards_math.latex_expr import to_sympy_syntax


def test_sympy_decides_equal_and_unequal_expressions() -> None:
    assert symbolic.sympy_equal("x**2-1", "(x-1)*(x+1)", 30.0) is True
    assert symbolic.sympy_equal("2*x+1", "1+3*x", 30.0) is False
    assert symbolic.sympy_equal("y=2*x+1", "2*x+1=y", 30.0) is True


def test_a_runaway_computation_is_cut_at_the_deadline_and_the_worker_recovers() -> None:
    symbolic.sympy_equal("1", "1", 30.0)  # start the worker outside the measurement
    tower = to_sympy_syntax("2^{2^{2^{30}}}")
    assert tower is not None
    started = time.monotonic()
    assert symbolic.sympy_equal(tower, "5", 0.5) is None
    assert time.monotonic() - started < 3.0
    assert symbolic.sympy_equal("2", "1+1", 30.0) is True


def test_an_unparsable_expression_is_undecided_not_an_error() -> None:
    assert symbolic.sympy_equal("(((", "1", 30.0) is None


def test_the_worker_refuses_non_whitelisted_text() -> None:
    answer = symbolic._worker.request({"op": "sympy", "a": "__import__('os')", "b": "1"}, 30.0)
    assert answer is not None and answer["equal"] is None and "refused" in answer["error"]


def test_math_verify_is_consulted_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []

    def fake_math_verify(gold: str, pred: str, timeout_s: float) -> bool:
        calls.append((gold, pred))
        return True

    monkeypatch.setattr(symbolic, "math_verify_installed", lambda: True)
    monkeypatch.setattr(symbolic, "math_verify_equal", fake_math_verify)
    verdict = equivalent("\\text{blue}", "\\text{azure}", Options(symbolic=False))
    assert verdict == equivalence.Verdict(True, "math_verify")
    assert calls == [("\\text{azure}", "\\text{blue}")]


def test_math_verify_is_skipped_when_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> bool:
        raise AssertionError("math-verify is not installed")

    monkeypatch.setattr(symbolic, "math_verify_installed", lambda: False)
    monkeypatch.setattr(symbolic, "math_verify_equal", fail)
    assert equivalent("\\text{blue}", "\\text{azure}", Options(symbolic=False)).equal is False


def test_math_verify_option_off_skips_it_even_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbolic, "math_verify_installed", lambda: True)
    monkeypatch.setattr(symbolic, "math_verify_equal", lambda *a: True)
    assert equivalent("1+x", "x+2", Options(math_verify=False, symbolic=False)).equal is False


@pytest.mark.skipif(not symbolic.math_verify_installed(), reason="math-verify is not installed")
def test_real_math_verify_in_the_worker() -> None:
    assert symbolic.math_verify_equal("\\frac{1}{2}", "0.5", 30.0) is True
    assert symbolic.math_verify_equal("3", "4", 30.0) is False

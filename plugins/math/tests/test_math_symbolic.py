"""The symbolic fallback: its deadline holds, and math-verify is used only when installed."""

from __future__ import annotations

import threading
import time

import pytest
from verl_rewards_math import equivalence, symbolic
from verl_rewards_math.equivalence import Options, equivalent
from verl_rewards_math.latex_expr import FUNCTIONS, to_sympy_syntax


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
    calls: list[list[tuple[str, str]]] = []

    def fake_math_verify(pairs: list[tuple[str, str]], timeout_s: float) -> bool:
        calls.append(pairs)
        return True

    monkeypatch.setattr(symbolic, "math_verify_installed", lambda: True)
    monkeypatch.setattr(symbolic, "math_verify_equal", fake_math_verify)
    verdict = equivalent("\\text{blue}", "\\text{azure}", Options(symbolic=False))
    assert verdict == equivalence.Verdict(True, "math_verify")
    assert calls == [[("\\text{azure}", "\\text{blue}")]]  # the answers as written


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


def test_real_math_verify_in_the_worker() -> None:
    assert symbolic.math_verify_installed()  # a default dependency: never skipped
    assert symbolic.math_verify_equal([("\\frac{1}{2}", "0.5")], 30.0) is True
    assert symbolic.math_verify_equal([("3", "4")], 30.0) is False


class Interrupt(BaseException):
    """Stands for verl-rewards' SampleTimeout, raised into the scoring thread at any point."""


def test_an_interrupted_request_does_not_leave_its_answer_for_the_next_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    worker = symbolic.SymbolicWorker()
    try:
        assert worker.request({"op": "sympy", "a": "1", "b": "1"}, 30.0) is not None  # started
        read_line = worker._read_line
        interrupt = [True]

        def interrupted_read_line(*args: object) -> bytes:
            if interrupt.pop() if interrupt else False:
                raise Interrupt()  # after the request was sent, before its answer was read
            return read_line(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(worker, "_read_line", interrupted_read_line)
        with pytest.raises(Interrupt):
            worker.request({"op": "sympy", "a": "1", "b": "2"}, 30.0)
        time.sleep(0.2)  # the worker answers the abandoned request meanwhile
        answer = worker.request({"op": "sympy", "a": "2", "b": "1+1"}, 30.0)
        assert answer is not None and answer["equal"] is True
    finally:
        worker.close()


def test_what_the_worker_prints_cannot_be_taken_for_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    source = symbolic._worker_source()
    noisy = source.replace(
        'if __name__ == "__main__":',
        "_quiet_sympy_equal = sympy_equal\n\n"
        "def sympy_equal(ctx, a, b):\n"
        "    print('{\"equal\": false}', flush=True)\n"
        "    os.write(1, b'noise from C\\n')\n"
        "    return _quiet_sympy_equal(ctx, a, b)\n\n"
        'if __name__ == "__main__":',
    )
    assert noisy != source
    monkeypatch.setattr(symbolic, "_worker_source", lambda: noisy)
    worker = symbolic.SymbolicWorker()
    try:
        for _ in range(2):
            answer = worker.request({"op": "sympy", "a": "x**2-1", "b": "(x-1)*(x+1)"}, 30.0)
            assert answer is not None and answer["equal"] is True
    finally:
        worker.close()


def test_waiting_for_a_busy_worker_counts_against_the_deadline() -> None:
    worker = symbolic.SymbolicWorker()
    results: list[object] = []
    worker._lock.acquire()  # another thread's request, taking its time
    try:
        waiter = threading.Thread(
            target=lambda: results.append(worker.request({"op": "sympy", "a": "1", "b": "1"}, 0.3))
        )
        started = time.monotonic()
        waiter.start()
        waiter.join(5.0)
        assert not waiter.is_alive() and results == [None]
        assert time.monotonic() - started < 2.0
    finally:
        worker._lock.release()
        waiter.join(60.0)
        worker.close()


def test_a_slow_start_is_not_charged_to_the_requests_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    source = symbolic._worker_source()
    slow = source.replace('if __name__ == "__main__":', 'time.sleep(1.5)\n\nif __name__ == "__main__":')
    assert slow != source
    monkeypatch.setattr(symbolic, "_worker_source", lambda: slow)
    worker = symbolic.SymbolicWorker()
    try:
        started = time.monotonic()
        answer = worker.request({"op": "sympy", "a": "2", "b": "1+1"}, 0.3)
        assert answer is not None and answer["equal"] is True
        assert 1.5 <= time.monotonic() - started < 30.0
    finally:
        worker.close()


def test_a_restart_after_a_timeout_is_not_charged_to_the_next_request() -> None:
    worker = symbolic.SymbolicWorker()
    try:
        assert worker.start()
        tower = to_sympy_syntax("2^{2^{2^{30}}}")
        assert worker.request({"op": "sympy", "a": tower, "b": "5"}, 0.3) is None  # killed at its deadline
        assert worker._proc is None
        answer = worker.request({"op": "sympy", "a": "x**2-1", "b": "(x-1)*(x+1)"}, 0.3)
        assert answer is not None and answer["equal"] is True
    finally:
        worker.close()


def test_a_worker_that_never_starts_is_replaced() -> None:
    worker = symbolic.SymbolicWorker(startup_timeout_s=0.0)
    try:
        assert worker.request({"op": "sympy", "a": "1", "b": "1"}, 5.0) is None
        assert worker._proc is None  # killed, not left starting forever
    finally:
        worker.close()


def test_the_checks_of_one_answer_share_one_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    def slow_sympy(a: object, b: float, timeout_s: float | None = None) -> None:
        timeout_s = b if timeout_s is None else timeout_s
        calls.append(timeout_s)
        time.sleep(timeout_s)

    monkeypatch.setattr(symbolic, "math_verify_installed", lambda: True)
    monkeypatch.setattr(symbolic, "math_verify_equal", slow_sympy)
    monkeypatch.setattr(symbolic, "sympy_equal", slow_sympy)
    symbolic.ensure_started()
    started = time.monotonic()
    verdict = equivalent("\\{x+1, x+2, x+3\\}", "\\{y+1, y+2, y+3\\}", Options(timeout_s=0.5))
    assert verdict == equivalence.Verdict(False, "none")
    assert time.monotonic() - started < 1.0
    assert calls and sum(calls) <= 0.5 + 1e-6


# One identity per function the translator can emit: it holds only when the
# worker resolves the name to that SymPy function.
IDENTITIES = {
    "sin": ("sin(pi/2)", "1"),
    "cos": ("cos(pi)", "-1"),
    "tan": ("tan(pi/4)", "1"),
    "cot": ("cot(pi/4)", "1"),
    "sec": ("sec(0)", "1"),
    "csc": ("csc(pi/2)", "1"),
    "asin": ("asin(1)", "pi/2"),
    "acos": ("acos(0)", "pi/2"),
    "atan": ("atan(1)", "pi/4"),
    "sinh": ("sinh(x)", "(exp(x)-exp(-x))/2"),
    "cosh": ("cosh(x)", "(exp(x)+exp(-x))/2"),
    "tanh": ("tanh(0)", "0"),
    "log": ("log(exp(3))", "3"),
    "exp": ("exp(log(5))", "5"),
}


def test_every_translated_function_is_known_to_the_worker() -> None:
    assert set(IDENTITIES) == set(FUNCTIONS.values())
    for name, (a, b) in IDENTITIES.items():
        assert symbolic.sympy_equal(a, b, 30.0) is True, name


def test_math_verify_installed_is_looked_up_once() -> None:
    assert symbolic.math_verify_installed() is symbolic.math_verify_installed()
    assert symbolic.math_verify_installed.cache_info().hits >= 1  # type: ignore[attr-defined]

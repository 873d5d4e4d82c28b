"""The symbolic fallback: its deadline holds, and math-verify is used only when installed."""

from __future__ import annotations

import threading
import time

import pytest
from verl_rewards_math import equivalence, symbolic
from verl_rewards_math._symbolic_worker import MEMORY_BYTES
from verl_rewards_math.equivalence import Options, equivalent
from verl_rewards_math.latex_expr import FUNCTIONS, to_sympy_syntax
from verl_rewards_math.math_boxed import compute_score

from verl_rewards.child import ChildError, JsonLineWorker
from verl_rewards.limits import deadline_of


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
    answer = symbolic.ask({"op": "sympy", "a": "__import__('os')", "b": "1"}, 30.0)
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


def _checks() -> JsonLineWorker:
    """A worker of its own running the plugin's symbolic handler, as ``symbolic`` does."""
    return JsonLineWorker("verl_rewards_math._symbolic_worker:Checks", init=sorted(set(FUNCTIONS.values())),
                          memory_bytes=MEMORY_BYTES)


def test_a_busy_child_does_not_hold_up_another_threads_check() -> None:
    worker = _checks()
    tower = to_sympy_syntax("2^{2^{2^{30}}}")
    assert tower is not None
    try:
        assert worker.start()
        late: list[object] = []
        busy = threading.Thread(target=lambda: late.append(_late(worker, tower)))
        busy.start()
        time.sleep(0.5)
        began = time.monotonic()
        answer = worker.request({"op": "sympy", "a": "x**2-1", "b": "(x-1)*(x+1)"}, 30.0)
        assert answer["equal"] is True and time.monotonic() - began < 30.0
        busy.join(60)
        assert late == ["late"]
    finally:
        worker.close()


def _late(worker: JsonLineWorker, tower: str) -> str:
    try:
        worker.request({"op": "sympy", "a": tower, "b": "5"}, 3.0)
    except ChildError as e:
        return e.reason
    return "answered"


def test_a_restart_after_a_timeout_is_not_charged_to_the_next_request() -> None:
    worker = _checks()
    try:
        assert worker.start()
        tower = to_sympy_syntax("2^{2^{2^{30}}}")
        with pytest.raises(ChildError, match="late"):  # killed at its deadline
            worker.request({"op": "sympy", "a": tower, "b": "5"}, 0.3)
        answer = worker.request({"op": "sympy", "a": "x**2-1", "b": "(x-1)*(x+1)"}, 0.3)
        assert answer["equal"] is True
    finally:
        worker.close()


def test_a_child_that_never_starts_fails_the_check_not_the_answer() -> None:
    worker = JsonLineWorker("verl_rewards_math._symbolic_worker:Checks", init=[], startup_timeout_s=0.0)
    try:
        with pytest.raises(ChildError) as caught:
            worker.request({"op": "sympy", "a": "1", "b": "1"}, 5.0)
        assert caught.value.starting
    finally:
        worker.close()


@pytest.mark.parametrize(("tower", "match"), [
    ("9^{9^{9^{9}}}", "undecided"), ("10^{10^{10}}", "undecided"), ("\\frac{1}{9^{9^{9}}}", "undecided"),
    ("\\frac{9^{9^{9}}}{2}", "undecided"), ("9^{9^{9}} x", "undecided"),
    ("(10^{10})!", "none"),  # refused before SymPy: the translator has no factorial
])
def test_a_hostile_answer_is_a_zero_before_the_reward_calls_time_runs_out(tower: str, match: str) -> None:
    symbolic.ensure_started()
    began = time.monotonic()
    with deadline_of(3.0):
        result = compute_score("m", f"\\boxed{{{tower}}}", "5", timeout_s=600.0, math_verify=False)
    assert time.monotonic() - began < 3.0
    assert result == {"score": 0.0, "acc": False, "pred": tower, "match": match}


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


def _stopped_for(seconds: float) -> threading.Thread:
    """Stop every idle symbolic child (SIGSTOP) now and let it go on after ``seconds``: a
    machine too loaded to run it for that long."""
    import contextlib
    import os
    import signal

    assert symbolic.ensure_started()
    deadline = time.monotonic() + 60  # the spare's start, so no child appears after the stop
    while symbolic._worker._warming and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [child.proc.pid for child in symbolic._worker._idle]
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)

    def resume() -> None:
        time.sleep(seconds)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # killed meanwhile, for being late
                os.kill(pid, signal.SIGCONT)

    thread = threading.Thread(target=resume)
    thread.start()
    return thread


def test_a_verdict_does_not_depend_on_the_load_of_the_machine() -> None:
    """Math-Verify's case flaked under load with a 2 s wall-clock deadline (math-verify needs
    0.1-0.7 s of CPU on it). Its budget is CPU time: a child not run for 3 s is not charged."""
    gold = "$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}$"
    pred = "$F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k$"
    assert symbolic.ensure_started()
    resumed = _stopped_for(3.0)
    try:
        verdict = compute_score("peer", f"\\boxed{{{pred}}}", gold)
    finally:
        resumed.join()
    assert (verdict["acc"], verdict["match"]) == (True, "math_verify")


def test_a_hostile_answer_is_cut_after_its_cpu_budget_and_within_its_wall_clock_bound() -> None:
    assert symbolic.ensure_started()
    began = time.monotonic()
    verdict = compute_score("peer", "\\boxed{9^{9^{9^{9}}}}", "5", timeout_s=0.5)
    assert (verdict["acc"], verdict["match"]) == (False, "undecided")
    assert time.monotonic() - began < 0.5 * symbolic.WALL_PER_CPU + 1.0
    resumed = _stopped_for(4.0)  # and a child that is not run at all is cut at the wall-clock bound
    budget = symbolic.Budget(0.5)
    try:
        assert budget.run(lambda seconds: symbolic.sympy_equal("2", "1+1", seconds)) is None
        assert time.monotonic() - budget.wall_by < 1.0
    finally:
        resumed.join()

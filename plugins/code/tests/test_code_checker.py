"""Special judges: the problem's checker decides each test, in the sandbox; a failing checker fails the sample."""

from __future__ import annotations

import json
import signal
import textwrap
from typing import Any

import pytest
from verl_rewards_code import checker as checker_module
from verl_rewards_code.checker import CheckerError, verdict
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.sandbox import RunResult
from verl_rewards_code.spec import Checker, parse_problem

from verl_rewards import Scorer

# Print two positive integers whose sum is n: many outputs are right.
SUM_CHECKER = """
import sys
inp, out, ans = (open(p).read() for p in sys.argv[1:4])
n = int(inp)
try:
    a, b = map(int, out.split())
except ValueError:
    sys.exit(1)
sys.exit(0 if a > 0 and b > 0 and a + b == n else 1)
"""
SUM = {"inputs": ["4\n", "10\n"], "outputs": ["1 3\n", "1 9\n"]}


def truth(checker: str | None = SUM_CHECKER, language: str = "python", base: dict[str, Any] = SUM) -> str:
    spec = dict(base)
    if checker is not None:
        spec["checker"] = {"language": language, "source": textwrap.dedent(checker)}
    return json.dumps(spec)


def score(program: str, ground_truth: str, **kwargs: Any) -> tuple[float, str]:
    result = compute_score("codeforces", textwrap.dedent(program), ground_truth, None, **kwargs)
    return result["score"], result["test_statuses"]


HALVES = "n = int(input())\nprint(n // 2, n - n // 2)\n"


# ------------------------------------------------------------------ reading


def test_a_checker_is_read_with_the_tests() -> None:
    problem = parse_problem(truth())
    assert problem.checker == Checker("python", textwrap.dedent(SUM_CHECKER))
    assert len(problem.tests) == 2 and parse_problem(SUM).checker is None
    # With a checker, the expected outputs may be left out.
    alone = parse_problem({"inputs": ["4\n"], "checker": {"source": "pass"}})
    assert [t.expected for t in alone.tests] == [""] and alone.checker == Checker("python", "pass")
    with pytest.raises(ValueError, match="1 inputs but 0 outputs"):
        parse_problem({"inputs": ["4\n"]})


@pytest.mark.parametrize(
    ("checker", "message"),
    [
        ("print(1)", "'checker' must be an object"),
        ({"language": "java", "source": "x"}, "language must be one of python, cpp, not 'java'"),
        ({"language": "python"}, "needs its program as text in 'source'"),
        ({"language": "python", "source": "  "}, "needs its program as text in 'source'"),
        ({"source": "x", "args": []}, r"unknown key\(s\) \['args'\]"),
    ],
)
def test_a_malformed_checker_is_an_error(checker: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_problem({**SUM, "checker": checker})


# ---------------------------------------------------------------- verdicts


@pytest.mark.parametrize(
    ("result", "score"),
    [
        (RunResult("", "ok 2 numbers", exit_code=0), 1.0),
        (RunResult("1\n", "", exit_code=0), 1.0),
        (RunResult("0\n", "Wrong Answer", exit_code=0), 0.0),  # CMS: exit 0, the score on stdout
        (RunResult(" 0.25 \n", "", exit_code=0), 0.25),
        (RunResult("anything", "wrong answer 3 != 4", exit_code=1), 0.0),  # testlib's WA
        (RunResult("", "wrong output format", exit_code=2), 0.0),  # testlib's PE
        (RunResult("0.5\n", "", exit_code=7), 0.5),
        (RunResult("", "points 0.4 two of five right", exit_code=7), 0.4),
        (RunResult("", "points 1", exit_code=7), 1.0),
    ],
)
def test_the_checkers_exit_status_and_stdout_are_its_verdict(result: RunResult, score: float) -> None:
    assert verdict(result) == score


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (RunResult("", "FAIL answer file broken", exit_code=3), "checker \\(python\\) failed: exit status 3: FAIL answer"),
        (RunResult("", "Traceback\nKeyError: 3", exit_code=42), "failed: exit status 42: Traceback\nKeyError: 3"),
        (RunResult("OK\n", "", exit_code=0), "printed 'OK\\\\n' on stdout: expected nothing or one score in \\[0, 1\\]"),
        (RunResult("1 1\n", "", exit_code=0), "expected nothing or one score"),
        (RunResult("nan\n", "", exit_code=0), "expected nothing or one score"),
        (RunResult("1.5\n", "", exit_code=0), "gave the score 1.5, outside \\[0, 1\\]"),
        (RunResult("-0.1\n", "", exit_code=7), "outside \\[0, 1\\]"),
        (RunResult("", "points", exit_code=7), "exited 7 \\(partial score\\) without a score"),
        (RunResult("", "", timed_out=True), "checker \\(python\\) timed out"),
        (RunResult("", "", signal=signal.SIGSEGV), f"was killed by signal {int(signal.SIGSEGV)}"),
        (RunResult("x" * 10, "", exit_code=0, output_limit_hit=True), "wrote more than its output limit"),
        (RunResult("", "", setup_error="mount failed"), "could not run: mount failed"),
    ],
)
def test_a_checker_that_fails_or_says_no_verdict_is_a_checker_error(result: RunResult, message: str) -> None:
    with pytest.raises(CheckerError, match=message) as caught:
        verdict(result)
    assert str(caught.value).startswith("the problem's checker (python) ")


# ------------------------------------------------------- end to end, real runs


def test_a_checker_accepts_a_right_answer_that_exact_matching_rejects() -> None:
    assert score(HALVES, truth(None)) == (0.0, "fail,fail")  # "2 2" is not "1 3"
    assert score(HALVES, truth()) == (1.0, "pass,pass")
    assert score("n = int(input())\nprint(n, 0)\n", truth()) == (0.0, "fail,fail")
    assert score("print('two numbers')\n", truth()) == (0.0, "fail,fail")  # unparsable: the checker's WA


def test_the_checker_runs_only_on_runs_that_ended_well() -> None:
    assert score("raise ValueError\n", truth()) == (0.0, "error,error")
    assert score("while True:\n    pass\n", truth(), timeout_s=0.5, stop_on_first_failure=True) == (
        0.0, "timeout,skipped")


PARTIAL_CHECKER = """
import sys
got = open(sys.argv[2]).read().split()
want = open(sys.argv[3]).read().split()
right = sum(g == w for g, w in zip(got, want))
print(right / len(want))
"""
LINES = {"inputs": ["", ""], "outputs": ["1 2 3 4\n", "5 6\n"]}


def test_a_checkers_partial_scores_add_up_and_all_or_nothing_wants_every_test_whole() -> None:
    ground = truth(PARTIAL_CHECKER, base=LINES)
    program = "print('1 2 0 0')\n"
    assert score(program, ground) == (pytest.approx((0.5 + 0.0) / 2), "partial,fail")
    assert score(program, ground, all_or_nothing=True) == (0.0, "partial,skipped")
    testlib_points = "import sys\nsys.stderr.write('points 0.25 one of four')\nsys.exit(7)\n"
    assert score("print(1)\n", truth(testlib_points, base=LINES)) == (0.25, "partial,partial")


def test_a_call_based_problem_gives_the_checker_json() -> None:
    any_order = """
        import json, sys
        args, got, want = (json.load(open(p)) for p in sys.argv[1:4])
        sys.exit(0 if sorted(got) == sorted(want) and args == [[3, 1, 2]] else 1)
        """
    base = {"fn_name": "distinct", "inputs": [[[3, 1, 2]]], "outputs": [[1, 2, 3]]}
    assert score("def distinct(xs):\n    return tuple(reversed(xs))\n", truth(any_order, base=base)) == (1.0, "pass")
    assert score("def distinct(xs):\n    return {3, 2, 1}\n", truth(any_order, base=base)) == (1.0, "pass")
    assert score("def distinct(xs):\n    return xs[:2]\n", truth(any_order, base=base)) == (0.0, "fail")
    assert score("def distinct(xs):\n    return b'x'\n", truth(any_order, base=base)) == (0.0, "fail")


@pytest.mark.parametrize(
    ("checker", "message"),
    [
        ("import sys\nraise KeyError('no such field')\n", "(?s)checker \\(python\\) failed: exit status 3: Traceback.*checker.py.*KeyError: 'no such"),
        ("while True:\n    pass\n", "checker \\(python\\) timed out"),
        ("print('Correct!')\n", "printed 'Correct!\\\\n' on stdout"),
        ("import sys\nsys.exit(3)\n", "failed: exit status 3"),
        ("import os\nos.kill(os.getpid(), 9)\n", "killed by signal 9"),
        ("import sys\nsys.stdout.write('1' * (8 << 20))\n", "wrote more than its output limit"),
        ("x = bytearray(1 << 40)\n", "(?s)failed: exit status 3: .*MemoryError"),
    ],
    ids=["raises", "endless", "prints prose", "testlib FAIL", "killed", "floods stdout", "memory hog"],
)
def test_a_hostile_or_broken_checker_fails_the_sample_naming_the_checker(checker: str, message: str) -> None:
    with pytest.raises(CheckerError, match=message):
        score(HALVES, truth(checker), checker_timeout_s=0.5, memory_mb=256)


def test_a_failing_checker_is_a_failed_sample_not_a_zero_through_the_scorer() -> None:
    sample = {"data_source": "codeforces", "solution_str": HALVES, "ground_truth": truth("raise SystemExit(3)\n")}
    with Scorer.from_config({"plugin": "code_exec", "executor": "local"}) as scorer:
        result = scorer.score([sample, {**sample, "ground_truth": truth()}])
    assert result.statuses == ["failed", "ok"] and result.scores[1] == 1.0
    assert result.errors[0] is not None and result.errors[0].startswith(
        "CheckerError: the problem's checker (python) failed: exit status 3")


CPP_SUM_CHECKER = """
#include <cstdio>
int main(int argc, char** argv) {
    long long n, a, b;
    FILE* in = std::fopen(argv[1], "r");
    FILE* out = std::fopen(argv[2], "r");
    if (std::fscanf(in, "%lld", &n) != 1) return 3;
    if (std::fscanf(out, "%lld %lld", &a, &b) != 2) return 2;
    return (a > 0 && b > 0 && a + b == n) ? 0 : 1;
}
"""


def test_a_cpp_checker_is_compiled_once_in_the_sandbox_and_judges() -> None:
    ground = truth(CPP_SUM_CHECKER, "cpp")
    assert score(HALVES, ground) == (1.0, "pass,pass")
    compiled = dict(checker_module._COMPILED)
    assert score("n = int(input())\nprint(n, 0)\n", ground) == (0.0, "fail,fail")
    assert score("print('x')\n", ground) == (0.0, "fail,fail")
    assert checker_module._COMPILED == compiled  # reused, not compiled again
    with pytest.raises(CheckerError, match=r"checker \(cpp\) did not compile \(exit status 1\): .*error"):
        score(HALVES, truth("int main( {", "cpp"))
    with pytest.raises(CheckerError, match=r"checker \(cpp\) failed: exit status 3"):
        score(HALVES, truth("int main() { return 3; }", "cpp"))

"""Why a test did not pass (issue 34, item 3): ``explanation`` in extra info, from real runs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.explain import STDERR_CHARS, explain_sample, output_difference, stderr_tail
from verl_rewards_code.outcome import PASS, Verdict

from verl_rewards.cli.main import main

SUMS = json.dumps({"inputs": ["1 2\n", "3 4\n", "5 6\n"], "outputs": ["3\n", "7\n", "11\n"]})


def explanation(program: str, truth: str = SUMS, **kwargs: Any) -> str | None:
    result = compute_score("apps", program, truth, None, **kwargs)
    return result.get("explanation")


# ------------------------------------------------------------ real runs, per status


def test_a_wrong_answer_names_the_first_differing_token_with_its_lines() -> None:
    program = "a, b = map(int, input().split())\nprint(a + b if a < 3 else a * b, 'end')\n"
    truth = json.dumps({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3 end\n", "7 end\n"]})
    assert explanation(program, truth) == (
        "test 2 of 2: fail: token 1 differs: got '12' (line 1: '12 end'), expected '7' (line 1: '7 end')")


def test_missing_and_extra_output_are_named() -> None:
    assert explanation("print(3)\n", json.dumps({"inputs": [""], "outputs": ["3\n4\n"]})) == (
        "test 1 of 1: fail: the output ended after 1 tokens; expected token 2: '4' (expected line 2)")
    assert explanation("print(3)\nprint(9)\n", json.dumps({"inputs": [""], "outputs": ["3\n"]})) == (
        "test 1 of 1: fail: the output has more than the 1 tokens expected: token 2 is '9' (line 2)")


def test_a_crash_gives_the_traceback_without_the_sandbox_paths() -> None:
    program = "a, b = map(int, input().split())\nprint(a + b if a < 3 else a // 0)\n"
    text = explanation(program)
    assert text is not None and text.startswith("test 2 of 3: error: crashed: exit status 1\nstderr (last lines):\n")
    assert '    File "main.py", line 2, in <module>' in text.splitlines()
    assert text.endswith("  ZeroDivisionError: integer division or modulo by zero")
    assert "verl-rewards-code-" not in text


def test_a_call_test_shows_the_value_returned_and_the_one_expected() -> None:
    truth = json.dumps({"fn_name": "f", "inputs": ["3"], "outputs": ["[1, 2, 3]"]})
    assert explanation("def f(n):\n    return list(range(n))\n", truth) == (
        "test 1 of 1: fail: returned [0, 1, 2], expected [1, 2, 3]")
    long = explanation("def f(n):\n    return list(range(10 ** 5))\n", truth)
    assert long is not None and long.startswith("test 1 of 1: fail: returned [0, 1, 2, 3, 4, 5, 6, 7, ...]")


def test_an_assert_test_shows_the_assertion_and_the_harness_line() -> None:
    truth = json.dumps({"asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4, 'two and two'"]})
    text = explanation("def add(a, b):\n    return a * b\n", truth)
    assert text == ("test 1 of 2: fail: the assertion did not hold: 'assert add(1, 2) == 3'\n"
                    "stderr (last lines):\n  AssertionError:")


def test_timeouts_say_their_limit_and_tests_never_started_say_so() -> None:
    text = explanation("import time\ntime.sleep(60)\n", timeout_s=0.5, time_budget_s=3.0)
    assert text == "test 1 of 3: timeout: did not finish within its time limit (0.5 s of wall clock, 1 s of CPU)"
    every = explanation("import time\ntime.sleep(60)\n", timeout_s=0.5, time_budget_s=3.0, explain="all")
    assert every is not None and every.endswith("test 3 of 3: timeout: not run: the sample's time budget was spent")


def test_every_test_with_all_and_nothing_with_none() -> None:
    program = "a, b = map(int, input().split())\nprint(a - b)\n"
    every = explanation(program, explain="all")
    assert every is not None and [line.split(": ")[0] for line in every.split("\n\n")] == [
        "test 1 of 3", "test 2 of 3", "test 3 of 3"]
    assert explanation(program, explain="none") is None
    assert explanation("a, b = map(int, input().split())\nprint(a + b)\n") is None  # all passed
    assert "explanation" not in compute_score("apps", program, SUMS, None, explain="none")
    with pytest.raises(ValueError, match="explain must be one of 'first', 'all', 'none', not 'some'"):
        compute_score("apps", program, SUMS, None, explain="some")  # type: ignore[arg-type]


def test_skipped_tests_are_not_explained() -> None:
    program = "a, b = map(int, input().split())\nprint(a - b)\n"
    assert explanation(program, explain="all", stop_on_first_failure=True) == (
        "test 1 of 3: fail: token 1 differs: got '-1' (line 1: '-1'), expected '3' (line 1: '3')")


def test_a_fence_tag_the_sandbox_does_not_run_is_named_not_run_as_python(caplog: pytest.LogCaptureFixture) -> None:
    response = "In Go:\n```go\npackage main\nfunc main() { println(3) }\n```\n"
    result = compute_score("apps", response, SUMS, None)
    assert (result["score"], result["test_statuses"], result["language"]) == (
        0.0, "compile_error,compile_error,compile_error", "go")
    assert result["compile_error"] == (
        "the response's program is tagged 'go', a language code_exec does not run (it runs python, cpp, java, "
        "javascript, rust, c): not run, every test is compile_error")
    assert result["explanation"] == "the program was not run: " + result["compile_error"]
    # A per-run note: logged once per tag in a process.
    with caplog.at_level("WARNING", logger="verl_rewards_code"):
        compute_score("apps", response.replace("go", "kotlin"), SUMS, None)
        compute_score("apps", response.replace("go", "kotlin"), SUMS, None)
    assert len([r for r in caplog.records if "'kotlin'" in r.getMessage()]) == 1
    # Before: the Go source ran as Python (a SyntaxError, status error), with nothing said.
    # A versioned Python tag is Python; the language kwarg still runs any block in its language.
    assert compute_score("apps", "```python3.11\nprint(3)\n```", json.dumps(
        {"inputs": [""], "outputs": ["3"]}), None)["score"] == 1.0


def test_a_compile_error_is_explained_by_the_compilers_first_lines() -> None:
    result = compute_score("apps", "```cpp\nint main() { return x; }\n```", SUMS, None)
    assert result["test_statuses"].split(",") == ["compile_error"] * 3
    first = result["compile_error"].splitlines()[0]
    assert result["explanation"].startswith(f"the program was not run: {first}")


# ------------------------------------------------------------------ bounded, linear


DIFFERENCES = {
    "one long line of tokens": lambda n: ("1 " * (n // 2) + "2", "1 " * (n // 2) + "3"),
    "a token per line": lambda n: ("1\n" * (n // 2) + "2", "1\n" * (n // 2) + "3"),
    "one long token": lambda n: ("9" * n, "9" * (n - 1) + "8"),
    "blank lines, then a token": lambda n: ("\n" * n + "x", "y"),
    "tokens equal by value, not text": lambda n: ("07 " * (n // 12) + "1", "7 " * (n // 12) + "2"),
}


@pytest.mark.parametrize("name", sorted(DIFFERENCES))
def test_finding_the_difference_in_megabyte_outputs_is_linear(name: str) -> None:
    make = DIFFERENCES[name]
    size = 4 * 1024 * 1024

    def seconds(n: int) -> tuple[float, str]:
        started = time.perf_counter()
        text = output_difference(*make(n))
        return time.perf_counter() - started, text

    small_s, _ = seconds(size // 4)
    large_s, text = seconds(size)
    assert large_s < 5.0 and large_s < 8 * small_s + 0.25, (small_s, large_s)
    assert len(text) < 600 and text.startswith("token "), text


def test_the_difference_names_the_token_and_its_line_on_each_side() -> None:
    size = 4 * 1024 * 1024
    assert output_difference("1\n" * size + "2", "1\n" * size + "3") == (
        f"token {size + 1} differs: got '2' (line {size + 1}: '2'), expected '3' (line {size + 1}: '3')")
    assert output_difference("1 2\n3 4\n5", "1 2\n3 4 5 6") == (
        "the output ended after 5 tokens; expected token 6: '6' (expected line 2)")
    # Tokens split as str.split() does (any Unicode space); then whitespace alone differs.
    assert output_difference("\u3000a\x1cb", "a b") == "line 1 differs: got '\\u3000a\\x1cb', expected 'a b'"
    assert output_difference("a  b\n", "a b") == "line 1 differs: got 'a  b', expected 'a b'"


def test_the_stderr_tail_is_whole_lines_and_bounded() -> None:
    tail = stderr_tail("".join(f"line {i}\n" for i in range(10_000)))
    assert tail.splitlines() == [f"  line {i}" for i in range(9988, 10_000)]
    one_long_line = stderr_tail("x" * 100_000)
    assert len(one_long_line) <= STDERR_CHARS + 2


def test_the_sample_explanation_skips_passes_and_skips() -> None:
    verdicts = [PASS, Verdict("fail", 0.0, "why"), Verdict("skipped"), Verdict("error", 0.0, "crash")]
    assert explain_sample(verdicts, "first") == "test 2 of 4: fail: why"
    assert explain_sample(verdicts, "all") == "test 2 of 4: fail: why\n\ntest 4 of 4: error: crash"
    assert explain_sample([PASS, Verdict("skipped")], "all") is None


# ------------------------------------------------------------------ score -v


def test_score_verbose_prints_the_failing_tests_explanation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"data_source": "apps", "solution_str": program, "ground_truth": SUMS} for program in (
        "a, b = map(int, input().split())\nprint(a + b)\n", "a, b = map(int, input().split())\nprint(a + b if a < 3 else a // 0)\n")]
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["-v", "score", "-i", str(source), "-o", str(target), "reward.plugin=code_exec",
                 "reward.executor=local"]) == 0
    err = capsys.readouterr().err
    assert "row 2: explanation:\n  test 2 of 3: error: crashed: exit status 1\n  stderr (last lines):\n" in err
    assert "\n    ZeroDivisionError: integer division or modulo by zero\n" in err
    scored = [json.loads(line) for line in target.read_text().splitlines()]
    assert [row["explanation"] for row in scored] == [None, scored[1]["explanation"]]
    assert scored[1]["explanation"].startswith("test 2 of 3: error: crashed")

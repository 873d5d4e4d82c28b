"""code_exec end to end: responses scored against APPS/TACO-style tests in the sandbox."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from verl_rewards_code.code_exec import compute_score

ADD = "Read two ints and print the sum.\n```python\na, b = map(int, input().split())\nprint(a + b)\n```\n"
TRUTH = json.dumps({"inputs": ["1 2\n", "3 4\n", "-5 5\n"], "outputs": ["3\n", "7\n", "0\n"]})


def score(response: str, truth: Any = TRUTH, **kwargs: Any) -> dict[str, Any]:
    result: dict[str, Any] = compute_score("taco", response, truth, None, **kwargs)
    return result


def test_a_correct_program_passes_every_test() -> None:
    result = score(ADD)
    assert result["score"] == 1.0
    assert (result["tests_passed"], result["tests_total"], result["test_statuses"]) == (
        3,
        3,
        "pass,pass,pass",
    )
    assert result["isolation"] in ("namespaces", "rlimits")


def test_score_is_the_fraction_of_tests_passed() -> None:
    program = "```python\na, b = map(int, input().split())\nprint(a + b if a > 0 else 99)\n```"
    result = score(program)
    assert result["score"] == pytest.approx(2 / 3)
    assert result["test_statuses"] == "pass,pass,fail"


def test_a_dict_ground_truth_works_like_json_text() -> None:
    assert score(ADD, json.loads(TRUTH)) == score(ADD)


def test_a_response_without_fences_is_run_whole() -> None:
    assert score("a, b = map(int, input().split())\nprint(a + b)")["score"] == 1.0


def test_prose_without_code_fails_as_an_error() -> None:
    result = score("I am not sure how to solve this.")
    assert (result["score"], result["test_statuses"]) == (0.0, "error,error,error")


def test_assert_lines_run_after_the_program() -> None:
    truth = {"asserts": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(2, 2) == 5"]}
    result = score("```python\ndef add(a, b):\n    return a + b\n```", truth)
    assert (result["score"], result["test_statuses"]) == (pytest.approx(2 / 3), "pass,pass,fail")


def test_stdio_tests_and_asserts_combine() -> None:
    truth = {"inputs": ["2\n"], "outputs": ["4\n"], "asserts": ["assert square(3) == 9"]}
    program = "```python\ndef square(x):\n    return x * x\n\nif __name__ == '__main__':\n    import sys\n    data = sys.stdin.read().split()\n    if data:\n        print(square(int(data[0])))\n```"
    assert score(program, truth)["test_statuses"] == "pass,pass"


def test_all_or_nothing_scores_partial_success_as_zero() -> None:
    program = "```python\na, b = map(int, input().split())\nprint(a + b if a > 0 else 99)\n```"
    assert score(program, all_or_nothing=True)["score"] == 0.0
    assert score(ADD, all_or_nothing=True)["score"] == 1.0


def test_stop_on_first_failure_skips_the_remaining_tests() -> None:
    result = score("```python\nprint(3)\n```", stop_on_first_failure=True)
    assert result["test_statuses"] == "pass,fail,skipped"
    assert result["score"] == pytest.approx(1 / 3)


def test_an_endless_program_times_out_on_every_test_within_bounds() -> None:
    started = time.monotonic()
    result = score("```python\nwhile True:\n    pass\n```", timeout_s=0.5)
    assert (result["score"], result["test_statuses"]) == (0.0, "timeout,timeout,timeout")
    assert time.monotonic() - started < 3 * (0.5 + 1.0) + 3.0


def test_a_crashing_program_scores_zero_and_the_caller_survives() -> None:
    result = score("```python\nimport os\nos.abort()\n```")
    assert (result["score"], result["test_statuses"]) == (0.0, "error,error,error")


def test_a_memory_hog_is_reported_as_memory() -> None:
    result = score("```python\nx = bytearray(1 << 40)\n```", memory_mb=256)
    assert result["test_statuses"] == "memory,memory,memory"


def test_extra_info_values_are_scalars() -> None:
    assert all(isinstance(v, (int, float, str, bool)) for v in score(ADD).values())


def test_malformed_ground_truth_is_an_error_not_a_zero() -> None:
    with pytest.raises(ValueError, match="holds no test"):
        score(ADD, "{}")


def test_an_unknown_option_is_an_error() -> None:
    with pytest.raises(TypeError):
        score(ADD, timeout=3)


def test_a_program_that_reads_the_dataset_for_its_answers_scores_nothing() -> None:
    # Issue 15, row 16: the dataset beside the tests holds the expected outputs.
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        pytest.skip("no unshare on this system: the program would see the host's files")
    dataset = Path(__file__).with_name("data") / "apps_rows.jsonl"
    row = json.loads(dataset.read_text())
    cheat = (
        "import json\n"
        f"row = json.loads(open({str(dataset)!r}).read())\n"
        "print(json.loads(row['ground_truth'])['outputs'][0], end='')\n"
    )
    started = time.monotonic()
    result = compute_score("apps", cheat, row["ground_truth"], None)
    assert (result["score"], result["test_statuses"]) == (0.0, "error")
    assert result["isolation"] == "namespaces" and time.monotonic() - started < 10.0
    # The same program, where the sandbox shows the host's files, finds the answer.
    assert compute_score("apps", cheat, row["ground_truth"], None, isolation="rlimits")["score"] == 1.0

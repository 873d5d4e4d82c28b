"""Where verl_default deliberately differs from verl 0.9.1 (the README's list), each shown on both.

verl's side runs in a child process, each sample killed at a deadline
(``peers.verl_scores``): a sample that hangs there comes back ``TIMED_OUT``.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from verl.utils.reward_score import default_compute_score
from verl.utils.reward_score.prime_math import grader as verl_grader
from verl_rewards_verl import prime_grader
from verl_rewards_verl.default import compute_score
from verl_rewards_verl.sources import UnknownDataSourceError
from verl_rewards_verl.sources import known_sources as default_sources

HANGS = [  # (data source, response, reference), and what hangs in verl
    ("hiyouga/geometry3k", "<think>x</think>\\boxed{9**9**9*x}", "x"),  # mathruler's SymPy step, no deadline
    ("numina_olympiads", "The answer is \\boxed{9**9**9\\pi}", "5"),  # eval of the answer in handle_pi
    ("searchR1_nq", "<answer>" * 100_000, {"target": ["Paris"]}),  # a lazy regex over unclosed tags
    ("hiyouga/geometry3k", "<think>" + "</think>\\boxed{" * 3000, "30"),  # the format regex backtracking
]
# Files an answer written as Python creates when verl evals it (no '_' in the path: verl's
# handle_base would stop at an underscore before its eval).
PROBE = Path(f"/tmp/verlrewardsprobe{os.getpid()}{time.monotonic_ns()}")
PYTHON_ANSWERS = [
    ("numina_olympiads", f"The answer is \\boxed{{open('{PROBE}a', 'w').write('x') + \\pi}}", "5"),
    ("numina_olympiads", f"The answer is \\boxed{{[open('{PROBE}b', 'w').write('x')]}}",
     "\\begin{pmatrix} 1 \\end{pmatrix}"),
]


@pytest.fixture(scope="module")
def verl_runs(cases: ModuleType, peers: ModuleType) -> Iterator[dict[str, concurrent.futures.Future[Any]]]:
    """verl's scores, from two child processes started at once, beside our side of the tests:
    ``math`` (HANGS and PYTHON_ANSWERS, and which probe files verl's evals wrote) and
    ``code`` (CODE_DIFFERENCES and MALFORMED)."""

    def math() -> dict[str, Any]:
        rows = HANGS + PYTHON_ANSWERS
        results = peers.verl_scores(rows, 2.0, ["geo3k", "prime_math", "search_r1_like_qa_em"])
        written = {name: Path(f"{PROBE}{name}").exists() for name in "ab"}
        for name in "ab":
            Path(f"{PROBE}{name}").unlink(missing_ok=True)
        return {"scores": dict(zip((r[1] for r in rows), results)), "written": written}

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        yield {"math": pool.submit(math), "code": pool.submit(peers.verl_scores, _code_rows(cases), 60.0, ["prime_code"])}


def test_inputs_that_hang_verl_are_scored_here(peers: ModuleType, verl_runs: dict[str, Any]) -> None:
    # The SymPy step gave up (no accuracy), the format held: 0.1. The others read no right answer.
    assert [compute_score(*row, sympy_timeout_s=1.0) for row in HANGS] == [pytest.approx(0.1), 0.0, 0.0, 0.0]
    verl = verl_runs["math"].result()
    assert [verl["scores"][row[1]] for row in HANGS] == [peers.TIMED_OUT] * 4


def test_an_answer_written_as_python_runs_in_verl_and_not_here(verl_runs: dict[str, Any]) -> None:
    verl = verl_runs["math"].result()  # before ours: the probe files are removed after verl's run
    # verl evals both answers: each writes its file, and the matrix one scores 1 ([1] is the matrix).
    assert verl["written"] == {"a": True, "b": True}
    assert [verl["scores"][row[1]] for row in PYTHON_ANSWERS] == [0.0, 1.0]
    assert [compute_score(*row) for row in PYTHON_ANSWERS] == [0.0, 0.0]
    assert not Path(f"{PROBE}a").exists() and not Path(f"{PROBE}b").exists()


@pytest.mark.parametrize("text", [
    "\\pi", "2\\pi", "\\pi\\pi", "2\\pi\\pi3\\pi", "\\frac{\\pi}{2}", "(\\pi, 2\\pi)", "[\\pi]", "x\\pi", "\\pipe",
    "-\\pi", "10\\pi/3", "\\pi^2", "2**3\\pi", "{\\pi}", "\\\\pi", "٣\\pi", "1e400\\pi", "(1, 2\\pi) < 3",
])
@pytest.mark.parametrize("pi", [3.141592653589793, 3.14])
def test_handle_pi_matches_verls_on_arithmetic(text: str, pi: float) -> None:
    assert prime_grader.handle_pi(text, pi) == verl_grader.handle_pi(text, pi)


def test_handle_pi_reads_many_pis_in_one_pass() -> None:
    """verl's loop copies the string once per \\pi (quadratic); here 50,000 take one pass."""
    result = prime_grader.handle_pi("\\pi" * 50_000, 3.14)
    assert isinstance(result, str) and result.startswith("1*3.14*3.14") and result.count("3.14") == 50_000


def test_a_matrix_answer_is_parsed_only_when_it_holds_numbers() -> None:
    reference = "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}"
    assert prime_grader.math_equal("Matrix([[1, 2], [3, 4]])", reference) is True
    assert prime_grader.math_equal("Matrix([[1, 2], [3, 5]])", reference) is False
    assert prime_grader.math_equal("Matrix([[one, 2], [3, 4]])", reference) is False  # not parsed


CODE_DIFFERENCES = [  # (program, tests, verl's score, ours)
    ("n = int(input())\nfor i in range(n):\n    print(i)", {"inputs": [["3"]], "outputs": [["0", "1", "2"]]},
     0.0, 1.0),  # APPS tests as lists of lines: verl's truncatefn asserts a string
    ("a, b = map(int, input().split())\ndef total():\n    global a, b\n    return a + b\nprint(total())",
     "one", 0.0, 1.0),  # verl wraps the program in a function: `global` finds nothing
    ("a, b = map(int, input().split())\nprint(a + b)\nexit()", "one", 0.0, 1.0),  # verl sets exit = None
    ("import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.exit(1)", "one", 1.0, 0.0),  # exit status
    ("big = bytearray(400 * 2**20)\na, b = map(int, input().split())\nprint(a + b)", "one", 1.0, 0.0),  # memory
    ("def add(a, b):\n    return a + b", {"fn_name": "add", "inputs": [[1, 2]], "outputs": [[3]]},
     0.0, 1.0),  # raw APPS call tests (argument lists): verl splits them as text
]


MALFORMED = [  # (reference, verl's score, our error)
    ({"inputs": [], "outputs": []}, 1.0, "code ground truth holds no test (verl scores every response 1.0 there)"),
    ("{not json", 0.0, "code ground truth is not valid JSON: Expecting property name enclosed in double quotes"),
    ({"inputs": ["1\n"], "outputs": []}, 0.0, "code ground truth has 1 inputs but 0 outputs"),
]


def _code_rows(cases: ModuleType) -> list[tuple[str, str, str]]:
    rows = [("apps", cases.fenced(program), json.dumps(cases.ONE_TEST if tests == "one" else tests))
            for program, tests, _, _ in CODE_DIFFERENCES]
    return rows + [("taco", cases.fenced(cases.ADD), t if isinstance(t, str) else json.dumps(t)) for t, _, _ in MALFORMED]


def test_programs_verls_harness_breaks_or_lets_through(cases: ModuleType, verl_runs: dict[str, Any]) -> None:
    rows = _code_rows(cases)[: len(CODE_DIFFERENCES)]
    assert [compute_score(*row) for row in rows] == [ours for _, _, _, ours in CODE_DIFFERENCES]
    assert verl_runs["code"].result()[: len(rows)] == [verl for _, _, verl, _ in CODE_DIFFERENCES]


def test_a_malformed_code_reference_fails_the_sample_instead_of_scoring_it(
    cases: ModuleType, verl_runs: dict[str, Any]
) -> None:
    for (_, _, truth), (_, _, message) in zip(_code_rows(cases)[len(CODE_DIFFERENCES):], MALFORMED):
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            compute_score("taco", cases.fenced(cases.ADD), truth)
    assert verl_runs["code"].result()[len(CODE_DIFFERENCES):] == [verl for _, verl, _ in MALFORMED]


def test_a_search_reference_without_targets_fails_every_sample() -> None:
    with pytest.raises(ValueError, match=r"searchR1 ground truth must be \{\"target\": \[answers\]\}, not dict"):
        compute_score("searchR1_nq", "no answer here", {"answers": ["Paris"]})
    # verl reads ground_truth["target"] when it finds an answer, and when it prints its
    # 1-in-64 debug lines: a seed whose first draw does not print, then one that does
    random.seed(0)
    assert default_compute_score("searchR1_nq", "no answer here", {"answers": ["Paris"]}) == 0.0
    with pytest.raises(KeyError):
        default_compute_score("searchR1_nq", "<answer>Paris</answer>", {"answers": ["Paris"]})
    random.seed(0)
    for _ in range(33):
        random.randint(1, 64)  # the draws verl makes, up to the first that prints
    with pytest.raises(KeyError):
        default_compute_score("searchR1_nq", "no answer here", {"answers": ["Paris"]})


def test_a_search_reference_may_be_json_text() -> None:
    assert compute_score("searchR1_nq", "<answer>Paris</answer>", '{"target": ["Paris"]}') == 1.0


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ('{"target"', "searchR1 ground truth is not valid JSON: Expecting ':' delimiter: line 1 column 10 (char 9)"),
        ('["Paris"]', 'searchR1 ground truth must be {"target": [answers]} (or its JSON text), not list'),
    ],
)
def test_a_search_reference_that_is_no_mapping_fails_the_sample(reference: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        compute_score("searchR1_nq", "<answer>Paris</answer>", reference)


def test_an_unknown_data_source_raises_naming_the_known_ones() -> None:
    with pytest.raises(UnknownDataSourceError) as raised:
        compute_score("my_dataset", "42", "42")
    message = str(raised.value)
    assert message.startswith("verl_default has no scorer for data_source 'my_dataset' (verl 0.9.1's "
                              "default_compute_score knows: openai/gsm8k, lighteval/MATH, ")
    assert message.endswith("searchR1_bamboogle, aime* (any data_source starting with 'aime')); route other "
                            "sources to another reward (reward.rewards + reward.route)")
    assert isinstance(raised.value, NotImplementedError) and isinstance(raised.value, ValueError)
    with pytest.raises(NotImplementedError):
        default_compute_score("my_dataset", "42", "42")
    with pytest.raises(UnknownDataSourceError, match="data_source None"):
        compute_score(None, "42", "42")  # type: ignore[arg-type]


def test_an_unknown_data_sources_error_names_whole_sources_when_a_sample_carries_it() -> None:
    from verl_rewards import Scorer

    with Scorer.from_config({"plugin": "verl_default", "executor": "local"}) as scorer:
        [error] = scorer.score([{"data_source": "my_dataset", "solution_str": "42", "ground_truth": "42"}]).errors
    assert error is not None and len(error) <= 500
    listed = error.split(" knows: ", 1)[1].split(" ...", 1)[0].rstrip(",").split(", ")
    families = [re.fullmatch(r"(\w+_)\{([\w,]+)\}", item) for item in listed]
    names = [f"{m[1]}{n}" for m in families if m for n in m[2].split(",")]
    names += [item for item, m in zip(listed, families) if not m]
    assert len(names) > 15 and set(names) <= set(default_sources())


def test_nothing_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    samples = [("lighteval/MATH", "\\fbox{5}", "5")] + [("searchR1_nq", "<answer>x</answer>", {"target": ["x"]})] * 200
    assert [compute_score(*s) for s in samples] == [0.0] + [1.0] * 200
    assert capsys.readouterr() == ("", "")
    for s in samples:
        default_compute_score(*s)
    assert capsys.readouterr().out  # verl prints math_reward's exception and one search sample in 64


"""Reading the tests from the ground truth, judging outputs, and classifying runs."""

from __future__ import annotations

import json
import re
import signal

import pytest
from verl_rewards_code.compare import outputs_match
from verl_rewards_code.outcome import status_of
from verl_rewards_code.sandbox import Limits, RunResult
from verl_rewards_code.spec import Call, ProgramTest, parse_tests


def test_inputs_outputs_and_asserts_become_tests_in_order() -> None:
    truth = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"], "asserts": ["assert f(1) == 2"]}
    assert parse_tests(json.dumps(truth)) == [
        ProgramTest("1 2\n", "3\n"),
        ProgramTest("3 4\n", "7\n"),
        ProgramTest("", None, "assert f(1) == 2"),
    ]
    assert parse_tests(truth) == parse_tests(json.dumps(truth))


def test_list_valued_inputs_are_joined_as_lines_and_numbers_become_text() -> None:
    assert parse_tests({"inputs": [["2", "1 2"]], "outputs": [3]}) == [ProgramTest("2\n1 2", "3")]


@pytest.mark.parametrize(
    ("truth", "message"),
    [
        ("not json", "ground truth is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        ("[1, 2]", "ground truth must be a mapping with 'inputs'/'outputs' or 'asserts' (or its JSON text), not list"),
        ({"inputs": ["1"], "outputs": []}, "1 inputs but 0 outputs"),
        ({"inputs": "1", "outputs": "1"}, "must be a list"),
        ({}, "holds no test"),
    ],
)
def test_malformed_ground_truth_is_an_error(truth: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_tests(truth)  # type: ignore[arg-type]


def test_a_call_based_problem_becomes_call_tests_not_stdin_tests() -> None:
    # Issue 29, item 1: refused until then (see test_code_calls.py).
    truth = {"fn_name": "add", "inputs": [[1, 2]], "outputs": [[3]]}
    assert parse_tests(truth) == parse_tests(json.dumps(truth)) == [ProgramTest("", None, None, Call("add", [1, 2], [3]))]


def test_an_empty_fn_name_is_a_stdio_problem() -> None:
    assert parse_tests({"fn_name": None, "inputs": ["1\n"], "outputs": ["1\n"]}) == [ProgramTest("1\n", "1\n")]


def test_the_cpu_limit_is_derived_in_one_place() -> None:
    assert Limits(timeout_s=0.5).cpu_s == 1
    assert Limits(timeout_s=2.5).cpu_s == 3
    assert ("RLIMIT_CPU", 3, 4) in Limits(timeout_s=2.5).rlimits()


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("3\n", "3"),
        ("3   \r\n4\n\n", "3\n4"),
        ("1 2 3\n", "1  2\n3"),
        ("0.3333333\n", "0.33333333"),
        ("YES", "YES\n"),
        ("1e3", "1000"),
        ("3.0", "3"),
        ("007", "7"),
        ("+7", "7"),
        ("-0", "0"),
        ("0" + "9" * 5000, "9" * 5000),
        # an expected integer: any spelling of exactly its value (LiveCodeBench's Decimal equality)
        ("1000.000", "1000"),
        ("1.000e3", "1000"),
        ("10000e-1", "1000"),
        ("-0.0", "0"),
        ("0e5", "-0"),
        ("123456789012345678901234567890.0", "123456789012345678901234567890"),
    ],
)
def test_outputs_that_judges_accept(actual: str, expected: str) -> None:
    assert outputs_match(actual, expected)


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("4\n", "3"),
        ("yes", "YES"),
        ("1 2", "1 2 3"),
        ("0.34", "0.33"),
        ("nan", "1.0"),
        ("inf", "1e308"),
        ("", "0"),
        # integers compare exactly: no relative tolerance for large ones
        ("1000001", "1000000"),
        ("-1000001", "-1000000"),
        ("9" * 5000, "9" * 4999 + "8"),
        ("-5", "5"),
        # spellings float() accepts but a judge does not
        ("1_0", "10"),
        ("1_000.5", "1000.5"),
        ("Infinity", "inf"),
        ("1e999", "2e999"),
        # issue 33: an expected integer is matched exactly, never within the float tolerance
        ("1000.0000001", "1000"),
        ("999999.5", "1000000"),
        ("1000000.9", "1000000"),
        ("1.2345678901234568e+29", "123456789012345678901234567890"),
        ("6.9999999", "7"),
        ("1e999999999999999999999", "1"),
    ],
)
def test_outputs_that_judges_reject(actual: str, expected: str) -> None:
    assert not outputs_match(actual, expected)


STDIO = ProgramTest("", "ok\n")
ASSERTION = ProgramTest("", None, "assert False")
LIMITS = Limits(timeout_s=2.0)


@pytest.mark.parametrize(
    ("result", "test", "status"),
    [
        (RunResult("ok\n", "", exit_code=0), STDIO, "pass"),
        (RunResult("no\n", "", exit_code=0), STDIO, "fail"),
        (RunResult("ok\n", "Traceback\nValueError: x", exit_code=1), STDIO, "error"),
        (RunResult("", "", timed_out=True), STDIO, "timeout"),
        (RunResult("", "", signal=signal.SIGXCPU), STDIO, "timeout"),
        (RunResult("", "", signal=signal.SIGKILL, cpu_time_s=2.5), STDIO, "timeout"),
        (RunResult("", "", signal=signal.SIGKILL, cpu_time_s=0.1), STDIO, "error"),
        (RunResult("", "Traceback\nMemoryError\n", exit_code=1), STDIO, "memory"),
        (
            RunResult("x" * 10, "OSError: [Errno 27] File too large", exit_code=1, output_limit_hit=True),
            STDIO,
            "output_limit",
        ),
        (RunResult("", "", setup_error="mount failed"), STDIO, "sandbox_error"),
        (RunResult("out\nNONCE\n", "", exit_code=0), ASSERTION, "pass"),
        # exit 0 without the harness's nonce: the assertion never ran
        (RunResult("", "", exit_code=0), ASSERTION, "fail"),
        (RunResult("NONCE", "", exit_code=0), ASSERTION, "fail"),
        (RunResult("\nNONCE\nmore\n", "", exit_code=0), ASSERTION, "fail"),
        (RunResult("", "Traceback\nAssertionError\n", exit_code=1), ASSERTION, "fail"),
        (RunResult("", "Traceback\nNameError: f\n", exit_code=1), ASSERTION, "error"),
    ],
)
def test_status_of_a_run(result: RunResult, test: ProgramTest, status: str) -> None:
    assert status_of(result, test, LIMITS, "NONCE" if test.assertion else None) == status

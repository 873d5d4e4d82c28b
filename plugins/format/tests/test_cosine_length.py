"""cosine_length: open-r1's get_cosine_scaled_reward, by its formula and its own test cases."""

from __future__ import annotations

import math
import threading
import time

import pytest
from verl_rewards_format.correctness import Verdict, ensure_started, math_verify_verdict
from verl_rewards_format.cosine_length import compute_score, cosine_scaled

from verl_rewards.limits import deadline_of

OPEN_R1 = {"min_value_wrong": -1.0, "max_value_wrong": -0.5, "min_value_correct": 0.5, "max_value_correct": 1.0}


@pytest.mark.parametrize(
    ("length", "correct", "expected"),
    [
        (0, True, 1.0),  # cos 0 = 1: the maximum for a right answer
        (500, True, 0.75),  # cos(pi/2) = 0: halfway
        (1000, True, 0.5),  # cos pi = -1: the minimum
        (250, True, 0.5 + 0.25 * (1 + math.sqrt(2) / 2)),
        (0, False, -1.0),  # a short wrong answer is penalised most
        (500, False, -0.75),
        (1000, False, -0.5),
        (1500, True, 0.75),  # past max_len the cosine turns back up, as open-r1's formula does
        (2000, True, 1.0),
    ],
)
def test_the_formula_hand_computed(length: int, correct: bool, expected: float) -> None:
    assert cosine_scaled(length, correct, **OPEN_R1, max_len=1000) == pytest.approx(expected)


def test_clip_holds_the_value_past_max_len() -> None:
    assert cosine_scaled(1500, True, **OPEN_R1, max_len=1000, clip=True) == pytest.approx(0.5)
    assert cosine_scaled(2000, False, **OPEN_R1, max_len=1000, clip=True) == pytest.approx(-0.5)
    assert compute_score("", "x" * 2000, "", {"correct": True}, correctness="extra_info", clip=True)["score"] == 0.5


@pytest.mark.parametrize(
    ("content", "length", "expected"),
    [  # open-r1 tests/test_rewards.py::test_cosine_scaled_reward, max_len 100, assertAlmostEqual places=2
        ("\\boxed{\\frac{63}{400}}", 20, 0.943),
        ("\\boxed{\\frac{63}{400}}", 80, 0.547),
        ("\\boxed{\\frac{64}{400}}", 20, -0.942),
        ("\\boxed{\\frac{64}{400}}", 80, -0.547),
    ],
)
def test_open_r1s_own_cases(content: str, length: int, expected: float) -> None:
    padded = content + " " * (length - len(content))
    result = compute_score("", padded, "\\frac{63}{400}", max_len=100)
    assert round(result["score"] - expected, 2) == 0


def test_a_gold_answer_math_verify_cannot_parse_scores_one_as_open_r1_skips_it() -> None:
    result = compute_score("", "\\boxed{42}", "no latex here", max_len=100)
    assert result == {"score": 1.0, "correct": False, "gold_parsed": False, "length": 10, "length_unit": "chars",
                      "check_error": ""}


def test_correctness_from_math_verify_reads_the_first_box_as_open_r1() -> None:
    assert math_verify_verdict("So $x = \\frac{1}{2}$, i.e. \\boxed{0.5}", "\\frac{1}{2}") == Verdict(True, True)
    assert math_verify_verdict("\\boxed{3} then \\boxed{4}", "$4$") == Verdict(False, True)
    assert math_verify_verdict("The answer is 4", "$4$") == Verdict(False, True)  # no anchor-free fallback


def test_math_verify_gives_the_same_verdict_off_the_main_thread() -> None:
    cases = [("\\boxed{\\frac{63}{400}}", "\\frac{63}{400}"), ("\\boxed{\\frac{64}{400}}", "\\frac{63}{400}")]
    seen: list[Verdict] = []
    worker = threading.Thread(target=lambda: seen.extend(math_verify_verdict(r, g) for r, g in cases))
    worker.start()
    worker.join(60)
    assert seen == [math_verify_verdict(r, g) for r, g in cases] == [Verdict(True, True), Verdict(False, True)]


@pytest.mark.parametrize(("extra_info", "expected"), [({"correct": True}, 0.75), ({"correct": 0}, -0.75)])
def test_correctness_from_extra_info(extra_info: dict, expected: float) -> None:
    assert compute_score("", "x" * 500, "", extra_info, correctness="extra_info")["score"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("kwargs", "extra_info", "message"),
    [
        ({"correctness": "extra_info"}, {}, "correctness='extra_info' needs extra_info['correct'] to be true or "
                                            "false, not None"),
        ({"correctness": "judge"}, {}, "correctness must be one of ('math_verify', 'extra_info'), not 'judge'"),
        ({"max_len": 0}, {"correct": True}, "max_len must be positive, not 0"),
    ],
)
def test_bad_settings_are_errors(kwargs: dict, extra_info: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        compute_score("", "x", "1", extra_info, **{"correctness": "extra_info", **kwargs})
    assert str(caught.value) == message


def test_length_in_tokens_when_the_trainer_passes_them() -> None:
    result = compute_score("", "short", "", {"correct": True, "response_length": 500}, correctness="extra_info",
                           unit="auto")
    assert (result["score"], result["length"], result["length_unit"]) == (pytest.approx(0.75), 500, "tokens")


def test_the_deprecated_equations_warning_is_not_logged_on_every_call(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        for _ in range(3):
            assert compute_score("", "\\boxed{x = 2}", "$2$", max_len=100)["correct"]
    assert [r for r in caplog.records if "equations=True" in r.getMessage()] == []


@pytest.mark.parametrize("tower", ["\\boxed{9^{9^{9^{9}}}}", "\\boxed{10^{10^{10}}}", "\\boxed{\\frac{1}{9^{9^{9}}}}"])
def test_a_hostile_answer_is_wrong_before_the_reward_calls_time_runs_out(tower: str) -> None:
    ensure_started()
    began = time.monotonic()
    with deadline_of(3.0):
        result = compute_score("", tower, "$5$", max_len=100)
    assert time.monotonic() - began < 3.0
    assert (result["correct"], result["gold_parsed"]) == (False, True)
    assert result["score"] == pytest.approx(cosine_scaled(len(tower), False, **OPEN_R1, max_len=100))
    assert result["check_error"].startswith("late: no answer before the reward call's time ran out")


def test_the_check_runs_off_this_process_so_a_runaway_cannot_hold_its_gil() -> None:
    ensure_started()
    ticks: list[float] = []
    stop = threading.Event()
    ticker = threading.Thread(target=lambda: [ticks.append(1) for _ in iter(lambda: stop.wait(0.05), True)])
    ticker.start()
    try:
        verdict = math_verify_verdict("\\boxed{9^{9^{9^{9}}}}", "$5$", timeout_s=2.0)
    finally:
        stop.set()
        ticker.join()
    assert verdict.correct is False and verdict.error.startswith("late: no answer within 2 s")
    assert len(ticks) >= 20

"""reasoning_steps: open-r1's reasoning_steps_reward, min(1, markers / 3), in linear time."""

from __future__ import annotations

import time

import pytest
from verl_rewards_format.reasoning_steps import compute_score, count_steps


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # open-r1 tests/test_rewards.py::test_reasoning_steps_reward
        ("Step 1: First step\nStep 2: Second step\nStep 3: Third step", 1.0),
        ("First, we do this.\nSecond, we do that.\nFinally, we conclude.", 1.0),
        ("Step 1: Only step", 1 / 3),
        ("First, we do this.\nFinally, we conclude.", 2 / 3),
        ("Just plain text without any clear steps", 0.0),
    ],
)
def test_open_r1s_own_cases(text: str, expected: float) -> None:
    assert compute_score("", text, "")["score"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "steps"),
    [  # by hand, with open-r1's pattern's reading
        ("1. add\n2. carry\n3. done", 1),  # ^ without re.MULTILINE: only at the very start
        ("Intro\n- a\n- b\n* c", 3),
        ("Step 12: x Step 3 : y Step 4:", 2),
        ("first, Next, Next,Finally,", 3),  # case-sensitive; "Finally," glued still counts
        ("Step 1:Step 2:", 2),
        ("\n-\n-", 2),
    ],
)
def test_markers_are_counted_as_open_r1s_pattern_counts_them(text: str, steps: int) -> None:
    assert count_steps(text) == steps
    assert compute_score("", text, "") == {"score": min(1.0, steps / 3), "steps": steps}


def test_multiline_counts_a_numbered_line_anywhere() -> None:
    assert count_steps("1. add\n2. carry\n3. done", multiline=True) == 3
    assert compute_score("", "Plan:\n1. add\n2. carry", "", multiline=True)["score"] == pytest.approx(2 / 3)


def test_target_steps_sets_the_count_for_full_credit() -> None:
    assert compute_score("", "Step 1: a\nStep 2: b", "", target_steps=2)["score"] == 1.0
    with pytest.raises(ValueError, match="target_steps must be at least 1, not 0"):
        compute_score("", "x", "", target_steps=0)


@pytest.mark.parametrize("text", ["Step " + "1" * 1_000_000, "Step 1" * 200_000, "1" * 1_000_000 + "x",
                                  "Step " * 200_000, "\n" * 1_000_000])
@pytest.mark.parametrize("multiline", [False, True])
def test_counting_is_linear_on_hostile_text(text: str, multiline: bool) -> None:
    # Each alternative starts with a literal: a failed try costs at most one digit run.
    # 1 MB takes ~0.03 s; a backtracking pattern would take minutes. 2 s is generous.
    started = time.perf_counter()
    count_steps(text, multiline)
    assert time.perf_counter() - started < 2.0

"""Every answer is scored in a ``verl_rewards.child`` child: one that holds the GIL in C (SymPy's
parse_expr evaluating a power tower, a factorial, Fraction reading a huge exponent) is a 0 before
the reward call's time runs out, with the reason in ``scorer_error``; this process runs on."""

from __future__ import annotations

import threading
import time

import pytest
from reasoning_gym.factory import create_dataset
from verl_rewards_reasoning_gym import isolation
from verl_rewards_reasoning_gym.reward import compute_score

from verl_rewards.errors import ChildError
from verl_rewards.limits import deadline_of

HOSTILE = [
    ("countdown", "9**9**9**9"), ("countdown", "(10**10)!"), ("countdown", "factorial(10**9)"),
    ("puzzle24", "9**9**9**9"), ("coin_flip", "1e999999999"), ("simple_integration", "x**(9**9**9)"),
    ("polynomial_multiplication", "9**9**9**9"),
]


@pytest.mark.parametrize(("task", "answer"), HOSTILE)
def test_a_hostile_answer_scores_zero_before_the_reward_calls_time_runs_out(task: str, answer: str) -> None:
    entry = create_dataset(task, seed=1, size=1)[0]
    isolation.ensure_started()
    ticks: list[int] = []
    stop = threading.Event()
    ticker = threading.Thread(target=lambda: [ticks.append(1) for _ in iter(lambda: stop.wait(0.05), True)])
    ticker.start()
    began = time.monotonic()
    try:
        with deadline_of(4.0):
            result = compute_score(f"reasoning_gym/{task}", f"<answer>{answer}</answer>", "", {"entry": entry},
                                   answer_timeout_s=600.0)
    finally:
        stop.set()
        ticker.join()
    assert time.monotonic() - began < 4.0
    assert (result["score"], result["answer_found"]) == (0.0, True)
    assert result["scorer_error"].startswith("late: no answer before the reward call's time ran out")
    assert len(ticks) >= 20  # this process ran Python meanwhile


def test_an_answer_past_its_own_limit_scores_zero_and_the_next_answer_is_scored() -> None:
    entry = create_dataset("countdown", seed=1, size=1)[0]
    isolation.ensure_started()
    late = compute_score("reasoning_gym/countdown", "<answer>9**9**9**9</answer>", "", {"entry": entry},
                         answer_timeout_s=1.0)
    assert (late["score"], late["scorer_error"]) == (0.0, "late: no answer within 1 s (answering a request)")
    right = compute_score("reasoning_gym/countdown", f"<answer>{entry['answer']}</answer>", "", {"entry": entry})
    assert (right["score"], right["scorer_error"]) == (1.0, "")


def test_a_child_that_cannot_start_in_time_fails_the_sample_not_the_answer() -> None:
    entry = create_dataset("countdown", seed=1, size=1)[0]
    isolation.close()  # the next answer needs a child started for it
    with deadline_of(0.6), pytest.raises(ChildError) as caught:
        compute_score("reasoning_gym/countdown", f"<answer>{entry['answer']}</answer>", "", {"entry": entry})
    assert caught.value.starting


def test_an_entrys_tuples_reach_the_scorer_as_tuples() -> None:
    entry = create_dataset("arc_agi", seed=1, size=1)[0]
    assert isinstance(entry["metadata"]["output"], tuple)
    result = compute_score("reasoning_gym/arc_agi", f"<answer>{entry['answer']}</answer>", "", {"entry": entry})
    assert result["score"] == 1.0


def _names(function: object) -> set[str]:
    code = function.__code__  # type: ignore[attr-defined]
    names, codes = set(), [code]
    while codes:
        current = codes.pop()
        names |= set(current.co_names)
        codes += [c for c in current.co_consts if hasattr(c, "co_names")]
    return names


def test_only_tasks_with_reasoning_gyms_string_comparing_default_scorer_are_scored_in_this_process() -> None:
    from reasoning_gym.dataset import ProceduralDataset
    from reasoning_gym.factory import DATASETS

    # The default compares strings: equality, containment, lengths. Nothing that computes the answer.
    assert _names(ProceduralDataset.score_answer) == {"isinstance", "str", "len"}
    assert isolation.LINEAR == {t for t, (cls, _) in DATASETS.items() if "score_answer" not in vars(cls)
                                and all("score_answer" not in vars(base) for base in cls.__mro__[1:-1]
                                        if base is not ProceduralDataset)}
    assert 30 <= len(isolation.LINEAR) < len(DATASETS) and not isolation.LINEAR & {"countdown", "coin_flip"}


def test_a_task_scored_in_this_process_scores_as_reasoning_gym() -> None:
    entry = create_dataset("leg_counting", seed=1, size=1)[0]
    assert "leg_counting" in isolation.LINEAR
    right = compute_score("reasoning_gym/leg_counting", f"<answer>{entry['answer']}</answer>", "", {"entry": entry})
    assert (right["score"], right["scorer_error"]) == (1.0, "")


@pytest.mark.parametrize(("response", "answer"), [("I could not solve it.", None), ("<answer></answer>", ""),
                                                  ("<answer> \n </answer>", "")])
def test_no_answer_is_scored_in_this_process_without_a_child(response: str, answer: str | None) -> None:
    """Nothing the policy wrote reaches the scorer: no child is needed (none can start in 0.6 s)."""
    dataset = create_dataset("countdown", seed=1, size=1)
    entry = dataset[0]
    assert "countdown" not in isolation.LINEAR
    isolation.close()
    with deadline_of(0.6):
        result = compute_score("reasoning_gym/countdown", response, "", {"entry": entry})
    assert (result["score"], result["scorer_error"]) == (dataset.score_answer(answer, entry), "")
    assert result["score"] == 0.01  # countdown's own credit for no answer


@pytest.mark.parametrize(("task", "answer"), [*HOSTILE, ("countdown", "x"), ("coin_flip", "0.5")])
def test_any_answer_given_to_a_task_with_its_own_scorer_goes_to_the_child(task: str, answer: str) -> None:
    entry = create_dataset(task, seed=1, size=1)[0]
    isolation.close()
    with deadline_of(0.6), pytest.raises(ChildError) as caught:  # no child can start in 0.6 s
        compute_score(f"reasoning_gym/{task}", f"<answer>{answer}</answer>", "", {"entry": entry})
    assert caught.value.starting

"""The ``repetition_penalty`` reward: open-r1's n-gram repetition penalty (``get_repetition_penalty_reward``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward


def repetition_penalty(text: str, ngram_size: int = 3, max_penalty: float = -1.0) -> float:
    """``(1 - distinct n-grams / n-grams) * max_penalty`` over the lowercased whitespace-split words.

    0 for an empty text or one with fewer than ``ngram_size`` words (open-r1's
    rule; Appendix C.2 of arXiv:2502.03373). ``max_penalty`` must not be positive.
    """
    if max_penalty > 0:
        raise ValueError(f"max_penalty {max_penalty} should not be positive")
    if ngram_size < 1:
        raise ValueError(f"ngram_size must be at least 1, not {ngram_size}")
    words = text.lower().split()
    if len(words) < ngram_size:
        return 0.0
    total = len(words) - ngram_size + 1
    distinct = len(set(zip(*(words[i:] for i in range(ngram_size)))))
    return (1 - distinct / total) * max_penalty or 0.0  # 0.0, not -0.0, when nothing repeats


@reward(
    description=(
        "open-r1's n-gram repetition penalty: (1 - distinct/total word n-grams) * max_penalty, "
        "0 without repetition, max_penalty (default -1) at the limit; lowercased whitespace-split words."
    ),
    timeout_s=5.0,
    tags=("format", "repetition", "open-r1"),
    kind="generic",
    examples=[
        # open-r1's own cases (tests/test_rewards.py)
        Example(solution_str="this is a test sentence", ground_truth="", expected=0.0,
                kwargs={"ngram_size": 2}),
        Example(solution_str="this this this this this", ground_truth="", expected=-0.75,
                kwargs={"ngram_size": 2}),
        Example(solution_str="this is a this is a test", ground_truth="", expected=-1 / 3,
                kwargs={"ngram_size": 2}),
        Example(solution_str="A B C A B C E F G A B C A B C", ground_truth="", expected=-5 / 13),
        Example(solution_str="word word word word", ground_truth="", expected=-0.25,
                kwargs={"max_penalty": -0.5}),
        Example(solution_str="two words", ground_truth="", expected=0.0),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    ngram_size: int = 3,
    max_penalty: float = -1.0,
) -> dict[str, Any]:
    """The repetition penalty of one response (open-r1's training defaults: 3-grams, -1)."""
    return {"score": repetition_penalty(solution_str, ngram_size, max_penalty)}

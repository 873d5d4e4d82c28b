"""gsm8k's default (strict) mode scores exactly as verl's own ``gsm8k.compute_score``."""

from __future__ import annotations

import collections
from typing import Any

import pytest
from verl.utils.reward_score import gsm8k as verl_gsm8k
from verl_rewards_math.gsm8k import compute_score


def test_the_batch_covers_every_kind_of_final_line(gsm8k_rows: list[Any]) -> None:
    kinds = collections.Counter(row.kind for row in gsm8k_rows)
    assert len(kinds) == 16 and min(kinds.values()) >= 50


@pytest.mark.parametrize("format_score", [0.0, 0.1])
def test_strict_scores_equal_verls_on_every_response(gsm8k_rows: list[Any], format_score: float) -> None:
    ours = [
        compute_score("openai/gsm8k", row.solution_str, row.ground_truth, format_score=format_score)["score"]
        for row in gsm8k_rows
    ]
    theirs = [
        float(verl_gsm8k.compute_score(row.solution_str, row.ground_truth, format_score=format_score))
        for row in gsm8k_rows
    ]
    mismatches = [(row, a, b) for row, a, b in zip(gsm8k_rows, ours, theirs) if a != b]
    assert mismatches == []
    assert {0.0, 1.0} <= set(ours)


def test_extra_false_returns_the_same_scores_bare(gsm8k_rows: list[Any]) -> None:
    assert len(gsm8k_rows) >= 256
    for row in gsm8k_rows[:256]:
        bare = compute_score("openai/gsm8k", row.solution_str, row.ground_truth, extra=False)
        assert type(bare) is float
        assert bare == compute_score("openai/gsm8k", row.solution_str, row.ground_truth)["score"]
    assert compute_score("gsm8k", "72", "72", method="flexible", extra=False) == 1.0


def test_strict_reads_only_the_last_300_characters_like_verl() -> None:
    response = "#### 72\n" + "x" * 300
    assert compute_score("openai/gsm8k", response, "72")["score"] == verl_gsm8k.compute_score(response, "72") == 0

"""Fixtures shared by the reasoning_gym plugin's tests: one generated entry per task."""

from __future__ import annotations

import time
import warnings
from typing import Any, NamedTuple

import pytest

SEED = 1  # a seed every task generates its first entry quickly with (knight_swap: 5 ms, not 5-7 s)


class Generated(NamedTuple):
    """One task's dataset (its own score_answer is the reference) and its first entry."""

    task: str
    dataset: Any
    entry: dict[str, Any]


@pytest.fixture(scope="session")
def generated() -> list[Generated]:
    """Every task in reasoning-gym's registry but ``composite``, one entry each (seed 1, default config)."""
    from reasoning_gym.factory import create_dataset
    from verl_rewards_reasoning_gym.tasks import COMPOSITE, TASKS

    out = []
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's "input contained no data" from pool_matrix
        for task in TASKS:
            if task != COMPOSITE:
                dataset = create_dataset(task, seed=SEED, size=1)
                out.append(Generated(task, dataset, dataset[0]))
    print(f"generated one entry for each of {len(out)} tasks in {time.perf_counter() - began:.1f} s")
    return out

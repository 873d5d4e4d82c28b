"""aio: the process's reward loop, and a deadline that holds even for a coroutine that never awaits."""

from __future__ import annotations

import time

import pytest

from verl_rewards import Scorer

NEVER_AWAITS = '''
import time

async def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "spin":
        end = time.monotonic() + 6
        while time.monotonic() < end:  # no await: asyncio.wait_for cannot end it
            pass
    return 1.0
'''


@pytest.mark.timeout(60)
def test_an_async_reward_that_never_awaits_times_out_and_the_next_batch_scores(reward_file):
    path = reward_file(NEVER_AWAITS, "spinner.py")
    with Scorer.from_config({"path": str(path), "executor": "local", "timeout_s": 1}) as scorer:
        began = time.monotonic()
        stuck = scorer.score([{"data_source": "d", "solution_str": "spin", "ground_truth": ""}])
        elapsed = time.monotonic() - began
        after = scorer.score([{"data_source": "d", "solution_str": "ok", "ground_truth": ""}])
    assert stuck.statuses == ["timeout"] and "did not yield within 1 s" in stuck.errors[0]
    assert elapsed < 5  # 1 s allowance + the loop's grace, not the 6 s spin
    assert after.scores == [1.0] and after.errors == [None]  # a fresh loop took over

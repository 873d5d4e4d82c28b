"""Scorer.close from a submitted batch's own thread (a future's done-callback)."""

from __future__ import annotations

import threading
import time

from verl_rewards import Scorer

ROW = {"data_source": "d", "solution_str": "42", "ground_truth": "42"}


def test_close_from_a_done_callback_still_closes_after_the_queued_batches():
    scorer = Scorer.from_config({"plugin": "exact_match", "executor": "local"})
    closed = threading.Event()
    first = scorer.submit([ROW])
    second = scorer.submit([ROW, ROW])
    first.add_done_callback(lambda _: (scorer.close(), closed.set()))
    assert [r["score"] for r in second.result(timeout=30).rows()] == [1.0, 1.0]  # queued work ran
    assert closed.wait(30)
    deadline = time.monotonic() + 10
    while scorer._executor is not None:  # closed by the helper thread once the batches ended
        assert time.monotonic() < deadline, "the scorer was never closed"
        time.sleep(0.05)

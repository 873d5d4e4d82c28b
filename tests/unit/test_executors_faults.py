"""The Ray pool's fault policy over plain indices: no Ray, milliseconds."""

from __future__ import annotations

import subprocess
import sys

from verl_rewards.executors.faults import (
    Chunk,
    after_death,
    after_stall,
    plan_chunks,
    should_recycle,
    silent_too_long,
    stall_of,
)


def test_the_policy_imports_no_ray():
    code = "import sys, verl_rewards.executors.faults; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_a_batch_is_cut_into_contiguous_chunks_about_four_per_worker_or_chunk_size():
    assert [c.indices for c in plan_chunks(10, 2)] == [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]
    assert [c.indices for c in plan_chunks(5, 2, chunk_size=3)] == [(0, 1, 2), (3, 4)]
    assert [len(c.indices) for c in plan_chunks(10_000, 1)] == [512] * 19 + [272]
    assert plan_chunks(0, 2) == []


def test_a_death_in_a_normal_chunk_reruns_its_unfinished_samples_precisely_charging_nobody():
    verdict = after_death(Chunk((4, 5, 6, 7)), (6, 7), {}, max_sample_crashes=2)
    assert verdict.requeue == (Chunk((6, 7), precise=True, died_on=True),)
    assert verdict.settled == {} and verdict.charged is None


def test_a_death_in_precise_mode_after_a_normal_one_charges_the_culprit_twice_and_fails_it():
    verdict = after_death(Chunk((6, 7), precise=True, died_on=True), (6, 7), {}, max_sample_crashes=2)
    assert verdict.charged == (6, 2)
    assert verdict.settled[6].status == "failed"
    assert verdict.settled[6].error.startswith("WorkerDied: the reward worker process died while "
                                               "scoring this sample (2 times)")
    assert verdict.requeue == (Chunk((7,)),)  # the rest run normally again


def test_a_culprit_under_its_crash_budget_is_rerun_alone():
    verdict = after_death(Chunk((3, 4), precise=True), (3, 4), {}, max_sample_crashes=3)
    assert verdict.charged == (3, 1) and verdict.settled == {}
    assert verdict.requeue == (Chunk((3,), precise=True), Chunk((4,)))
    again = after_death(Chunk((3,), precise=True), (3,), {3: 1}, max_sample_crashes=2)
    assert again.charged == (3, 2) and 3 in again.settled and again.requeue == ()


def test_a_death_after_everything_arrived_changes_nothing():
    assert after_death(Chunk((1, 2)), (), {}, 2) == after_stall(Chunk((1, 2)), (), 3, 5.0)
    assert after_death(Chunk((1, 2)), (), {}, 2).requeue == ()


def test_a_known_stuck_sample_is_a_timeout_and_the_others_rerun_in_contiguous_chunks():
    verdict = after_stall(Chunk((10, 11, 12, 13)), (11, 12, 13), 12, timeout_s=5)
    assert verdict.settled[12].status == "timeout"
    assert verdict.settled[12].error == ("SampleTimeout: exceeded timeout_s=5 in code Python could "
                                         "not interrupt; worker replaced")
    assert verdict.requeue == (Chunk((11,)), Chunk((13,)))


def test_an_unknown_culprit_is_pinned_by_a_precise_rerun_then_is_the_first_unreceived():
    first = after_stall(Chunk((0, 1, 2)), (1, 2), "unknown", timeout_s=1)
    assert first.requeue == (Chunk((1, 2), precise=True),) and first.settled == {}
    second = after_stall(Chunk((1, 2), precise=True), (1, 2), "unknown", timeout_s=1)
    assert list(second.settled) == [1] and second.requeue == (Chunk((2,)),)


def test_a_progress_report_names_the_stuck_sample_only_past_allowance_and_grace():
    assert stall_of(None, 0, 0.0, None, (1, 2)) is None
    assert stall_of(1, 1, running_for=5.5, allowed=5.0, unfinished=(1, 2)) is None  # within grace
    assert stall_of(1, 1, running_for=6.5, allowed=5.0, unfinished=(1, 2)) == 1
    assert stall_of(1, 4, running_for=60, allowed=20.0, unfinished=(1, 2)) == "unknown"  # a batch call
    assert stall_of(9, 1, running_for=60, allowed=5.0, unfinished=(1, 2)) == "unknown"


def test_a_silent_worker_is_stuck_only_after_a_whole_limit():
    assert not silent_too_long(100.0, 105.0, limit=6.0)
    assert silent_too_long(100.0, 106.0, limit=6.0)


def test_recycling_by_calls_or_memory_and_never_when_unset():
    assert should_recycle(3, 10.0, max_calls=3, max_rss_mb=None)
    assert not should_recycle(2, 10.0, max_calls=3, max_rss_mb=None)
    assert should_recycle(1, 600.0, max_calls=None, max_rss_mb=500.0)
    assert not should_recycle(10**6, 10.0**6, None, None)

"""The Ray executor under real faults (issue 15): every submitted sample gets
exactly one result, one bad sample fails only itself, and nothing hangs."""

from __future__ import annotations

import os
import threading
import time

import pytest

from verl_rewards import Scorer
from verl_rewards.errors import PluginShapeError

pytestmark = pytest.mark.ray


def _rows(*texts: str, truth: str = "1") -> list[dict]:
    return [{"data_source": "d", "solution_str": t, "ground_truth": truth} for t in texts]


def _cfg(plugin: str, **extra) -> dict:
    return {"plugin": plugin, "executor": "ray", "num_workers": 2, "worker_num_cpus": 0, **extra}


def test_close_waits_for_every_batch_submitted_before_it(ray_session):
    scorer = Scorer.from_config(_cfg("slow_cpu", kwargs={"ms": 5.0}, chunk_size=5)).start()
    futures = [scorer.submit(_rows(*["1"] * 20)) for _ in range(4)]
    began = time.monotonic()
    scorer.close()
    assert time.monotonic() - began < 60
    assert all(f.done() for f in futures)
    assert [f.result().scores for f in futures] == [[1.0] * 20] * 4


def test_close_from_another_thread_lets_the_running_score_finish(ray_session):
    scorer = Scorer.from_config(_cfg("slow_cpu", kwargs={"ms": 50.0}, chunk_size=2)).start()
    closer = threading.Timer(0.5, scorer.close)
    closer.start()
    began = time.monotonic()
    result = scorer.score(_rows(*["1"] * 40))  # about 1 s on two workers
    closer.join(timeout=60)
    assert not closer.is_alive() and time.monotonic() - began < 60
    assert result.scores == [1.0] * 40
    with pytest.raises(Exception, match="closed"):
        scorer.score(_rows("1"))


def test_an_unpicklable_extra_value_fails_only_its_sample(ray_session):
    texts = ["1"] * 120 + ["lock"] + ["0"] * 130
    with Scorer.from_config(_cfg("unpicklable_extra", chunk_size=251, num_workers=1)) as scorer:
        result = scorer.score(_rows(*texts))
    assert result.statuses == ["ok"] * 120 + ["failed"] + ["ok"] * 130
    assert result.scores == [1.0] * 120 + [0.0] + [0.0] * 130
    assert result.errors[120].startswith("RewardValueError: extra value 'tag' (lock) cannot be sent")
    assert "\x1b[" not in result.errors[120]
    assert result.extra_info["tag"][:2] == ["1", "1"]


def test_a_batch_value_float_rejects_fails_only_its_sample_and_bools_of_both_kinds_score(ray_session):
    texts = ["1", "huge", "np_true", "true", "0"]
    with Scorer.from_config(_cfg("odd_values", num_workers=1)) as scorer:
        result = scorer.score(_rows(*texts))
    assert result.statuses == ["ok", "failed", "ok", "ok", "ok"]
    assert result.scores == [1.0, 0.0, 1.0, 1.0, 0.0]
    assert result.errors[1].startswith("RewardValueError:") and "OverflowError" in result.errors[1]


def test_one_percent_segfaults_keep_scored_samples_and_fail_only_the_culprits(ray_session):
    texts = ["segfault" if i % 100 == 37 else str(i % 2) for i in range(300)]
    with Scorer.from_config(_cfg("faulty", timeout_s=30)) as scorer:
        began = time.monotonic()
        result = scorer.score(_rows(*texts))
        elapsed = time.monotonic() - began
    bad = [i for i, t in enumerate(texts) if t == "segfault"]
    assert [i for i, s in enumerate(result.statuses) if s != "ok"] == bad
    assert all(result.errors[i].startswith("WorkerDied:") and "(2 times)" in result.errors[i] for i in bad)
    assert [s for i, s in enumerate(result.scores) if i not in bad] == [
        float(t == "1") for i, t in enumerate(texts) if i not in bad]
    # Each culprit costs two deaths: in its chunk, then pinned in precise mode
    # (the samples before it pass, so both are its own); no good sample is
    # charged, and only the unfinished ones are re-run.
    assert result.metrics["worker_restarts"] <= 2 * len(bad)
    assert elapsed < 120


def test_max_sample_crashes_1_fails_only_the_sample_that_crashed(ray_session):
    texts = ["1"] * 10 + ["segfault"] + ["1"] * 10
    with Scorer.from_config(_cfg("faulty", max_sample_crashes=1, chunk_size=21, num_workers=1)) as scorer:
        result = scorer.score(_rows(*texts))
    assert result.statuses == ["ok"] * 10 + ["failed"] + ["ok"] * 10
    assert result.errors[10].startswith("WorkerDied:") and "(2 times)" in result.errors[10]


def test_a_worker_past_worker_max_rss_mb_is_replaced_between_chunks(ray_session):
    cfg = _cfg("leaky", num_workers=1, chunk_size=1, worker_max_rss_mb=400, kwargs={"mb": 100})
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score(_rows(*["1"] * 12))
    assert result.scores == [1.0] * 12
    pids = result.extra_info["pid"]
    runs = [len(list(group)) for _, group in __import__("itertools").groupby(pids)]
    assert len(runs) >= 3 and max(runs) <= 5  # a fresh worker every few 100 MiB calls
    assert result.metrics["worker_recycles"] in (len(runs) - 1, len(runs))  # the last may recycle too
    assert result.metrics["worker_restarts"] == 0


def test_a_worker_is_replaced_after_worker_max_calls_chunks(ray_session):
    cfg = _cfg("exact_match", num_workers=1, chunk_size=2, worker_max_calls=2)
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score(_rows(*["1"] * 8))
    pids = result.extra_info["pid"]
    assert [len(set(pids[i:i + 4])) for i in (0, 4)] == [1, 1] and pids[0] != pids[4]
    assert result.metrics["worker_recycles"] == 2  # after every second chunk
    assert os.getpid() not in pids


def test_a_shape_error_raised_on_a_worker_keeps_its_type_and_says_where(ray_session, make_dist):
    make_dist("shapeless-rewards", "0.1", "[verl_rewards]\nshapeless = plug_shapeless:NOT_CALLABLE\n",
              {"plug_shapeless.py": "NOT_CALLABLE = 42\n"})
    with pytest.raises(PluginShapeError) as info:
        # workers_only: the driver leaves it to the workers (else it fails there, before Ray)
        Scorer.from_config(_cfg("shapeless", ship_package=True, workers_only=True, num_workers=1)).start()
    message = str(info.value)
    assert message.count("cannot load reward") == 1
    assert "shapeless (shapeless-rewards 0.1)" in message and "(on worker node " in message

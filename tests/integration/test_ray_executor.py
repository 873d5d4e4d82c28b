"""The Ray executor with real actors and real faults."""

from __future__ import annotations

import os
import time

import pytest
import ray

from verl_rewards import RewardError, Scorer
from verl_rewards.errors import PluginNotInstalledError

pytestmark = pytest.mark.ray


def _rows(*texts: str, truth: str = "1") -> list[dict]:
    return [{"data_source": "d", "solution_str": t, "ground_truth": truth} for t in texts]


def _cfg(plugin: str, **extra) -> dict:
    return {"plugin": plugin, "executor": "ray", "num_workers": 2, "worker_num_cpus": 0, **extra}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_results_keep_input_order_across_chunks_and_workers(ray_session):
    texts = [str(i % 3) for i in range(101)]
    with Scorer.from_config(_cfg("exact_match", chunk_size=7)) as scorer:
        result = scorer.score(_rows(*texts))
    assert result.scores == [float(t == "1") for t in texts]
    assert len(set(result.extra_info["pid"])) == 2  # both workers took chunks
    assert os.getpid() not in result.extra_info["pid"]


def test_mixed_batch_of_real_faults_completes_with_every_good_sample_scored(ray_session):
    faults = ["loop", "c_sleep", "exit", "raise", "nan", "segfault"]
    texts = ["1", "0"] * 3 + faults + ["1"] * 10
    with Scorer.from_config(_cfg("faulty", timeout_s=2, chunk_size=4)) as scorer:
        began = time.monotonic()
        result = scorer.score(_rows(*texts))
        elapsed = time.monotonic() - began
    by_text = dict(zip(texts, zip(result.statuses, result.errors)))
    assert result.scores[:6] == [1.0, 0.0] * 3 and result.scores[-10:] == [1.0] * 10
    assert by_text["loop"] == ("timeout", "SampleTimeout: exceeded timeout_s=2")
    assert by_text["c_sleep"][0] == "timeout" and "Python could not interrupt" in by_text["c_sleep"][1]
    assert by_text["exit"][0] == "failed" and by_text["exit"][1].startswith("WorkerDied:")
    assert by_text["segfault"][0] == "failed" and by_text["segfault"][1].startswith("WorkerDied:")
    assert by_text["raise"][0] == "failed"
    assert by_text["raise"][1].startswith("RuntimeError: the reward raised on purpose (at ")
    assert by_text["raise"][1].endswith("verl_rewards_testkit/faults.py:25 in faulty)")
    assert by_text["nan"][0] == "failed" and "nan is not a finite number" in by_text["nan"][1]
    assert (result.n_ok, result.n_failed, result.n_timed_out) == (16, 4, 2)
    assert result.metrics["worker_restarts"] >= 3
    assert elapsed < 2 * 2 + 15  # two stalls of timeout_s run in parallel, plus restarts


def test_close_leaves_no_worker_process_behind(ray_session):
    with Scorer.from_config(_cfg("exact_match")) as scorer:
        pids = set(scorer.score(_rows("1", "2", "3", "4")).extra_info["pid"])
    assert pids
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def test_class_reward_with_unpicklable_state_is_built_once_on_each_worker(ray_session):
    with Scorer.from_config(_cfg("stateful", kwargs={"scale": 2.0}, chunk_size=5)) as scorer:
        first = scorer.score(_rows(*["1"] * 20))
        second = scorer.score(_rows(*["1"] * 20))
    assert first.scores == [2.0] * 20
    assert set(first.extra_info["instances"] + second.extra_info["instances"]) == {1}


def test_batch_and_async_shapes_on_workers(ray_session):
    with Scorer.from_config(_cfg("batch_exact")) as scorer:
        assert scorer.score(_rows("1", "2")).scores == [1.0, 0.0]
    with Scorer.from_config(_cfg("async_exact", num_workers=1, max_concurrency=8,
                                 kwargs={"delay_s": 0.1})) as scorer:
        began = time.monotonic()
        result = scorer.score(_rows(*["1"] * 32))
        elapsed = time.monotonic() - began
    assert result.scores == [1.0] * 32
    assert max(result.extra_info["peak"]) == 8
    assert elapsed < 32 * 0.1 / 2


def test_on_error_raise_stops_with_reward_error_naming_plugin_sample_and_cause(ray_session):
    with Scorer.from_config(_cfg("faulty", on_error="raise")) as scorer:
        with pytest.raises(RewardError) as info:
            scorer.score(_rows("1", "1", "raise", "1"))
    assert info.value.index == 2
    assert "faulty (verl-rewards-testkit 0.3.1)" in str(info.value)
    assert "RuntimeError: the reward raised on purpose" in str(info.value)


def test_submit_overlaps_with_the_callers_work(ray_session):
    with Scorer.from_config(_cfg("slow_cpu", kwargs={"ms": 20.0})) as scorer:
        began = time.monotonic()
        future = scorer.submit(_rows(*["1"] * 40))
        submitted = time.monotonic() - began
        result = future.result(timeout=60)
    assert submitted < 0.1 and result.scores == [1.0] * 40


def test_plugin_installed_only_on_the_driver_names_plugin_distribution_and_node(ray_session, make_dist):
    make_dist("driver-only-rewards", "4.2", "[verl_rewards]\nlocal_only = plug_driveronly.score:f\n",
              {"plug_driveronly/__init__.py": "",
               "plug_driveronly/score.py": "def f(data_source, solution_str, ground_truth, extra_info=None):\n"
                                            "    return 0.5\n"})
    with pytest.raises(PluginNotInstalledError) as info:
        Scorer.from_config(_cfg("local_only")).start()
    message = str(info.value)
    assert "local_only (driver-only-rewards 4.2)" in message
    assert "not installed on worker node" in message
    assert "reward.ship_package=true" in message


def test_ship_package_sends_the_plugin_to_workers_that_lack_it(ray_session, make_dist):
    make_dist("shipped-rewards", "1.0", "[verl_rewards]\nshipped = plug_shipped.score:f\n",
              {"plug_shipped/__init__.py": "",
               "plug_shipped/score.py": "import os\ndef f(data_source, solution_str, ground_truth, extra_info=None):\n"
                                         "    return {'score': 0.5, 'pid': os.getpid()}\n"})
    with Scorer.from_config(_cfg("shipped", ship_package=True, num_workers=1)) as scorer:
        result = scorer.score(_rows("x"))
    assert result.scores == [0.5] and result.extra_info["pid"] != [os.getpid()]


def test_scorer_joins_the_running_session_and_leaves_it_running(ray_session):
    with Scorer.from_config(_cfg("exact_match", num_workers=1)) as scorer:
        scorer.score(_rows("1"))
    assert ray.is_initialized()


def test_stall_holding_the_gil_in_c_is_isolated_and_failed_as_a_timeout(ray_session):
    texts = ["1"] * 6 + ["gil_sleep"] + ["1"] * 5
    with Scorer.from_config(_cfg("faulty", timeout_s=2, chunk_size=4)) as scorer:
        began = time.monotonic()
        result = scorer.score(_rows(*texts))
        elapsed = time.monotonic() - began
    assert result.statuses == ["ok"] * 6 + ["timeout"] + ["ok"] * 5
    assert "Python could not interrupt" in result.errors[6]
    # Not even a heartbeat can run: the culprit is found by re-running its chunk
    # one sample at a time, which costs about two timeouts instead of one.
    assert elapsed < 4 * (2 + 1) + 10


def test_a_batch_reward_gets_timeout_s_per_sample_for_its_whole_chunk(ray_session):
    # 12 samples x 200 ms in one batch call: 2.4 s, past timeout_s + grace but
    # well within the 12 s a 12-sample batch call is allowed.
    with Scorer.from_config(_cfg("slow_batch", timeout_s=1, chunk_size=12, num_workers=1)) as scorer:
        result = scorer.score(_rows(*["1"] * 12))
    assert result.statuses == ["ok"] * 12
    assert result.metrics["worker_restarts"] == 0


def test_an_async_chunk_gets_timeout_s_per_round_of_max_concurrency(ray_session):
    # 6 samples x 1.2 s at 2 at a time: 3.6 s per chunk, each sample within timeout_s.
    cfg = _cfg("sleepy", timeout_s=1.5, chunk_size=6, num_workers=1, max_concurrency=2,
               kwargs={"ms": 1200.0})
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score(_rows(*["1"] * 6))
    assert result.statuses == ["ok"] * 6
    assert result.metrics["worker_restarts"] == 0


def test_after_on_error_raise_the_next_batch_is_not_stuck_behind_the_abandoned_chunk(ray_session):
    # The failing chunk returns at once while the other worker is still busy
    # with 2 s of CPU; the next batch must not be queued behind (or beside) it.
    with Scorer.from_config(_cfg("faulty", on_error="raise", chunk_size=1, timeout_s=30)) as scorer:
        with pytest.raises(RewardError):
            scorer.score(_rows("loop", "raise"))
        began = time.monotonic()
        result = scorer.score(_rows("1", "1"))
        elapsed = time.monotonic() - began
    assert result.statuses == ["ok", "ok"]
    assert elapsed < 15  # not stuck behind the abandoned 30 s loop

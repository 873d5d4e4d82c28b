"""The process executor with real worker processes and real faults (issue 32): each fault
costs its own sample within timeout_s + 2 s, the host lives, the batch's other samples
keep their scores, the worker is replaced, and no worker outlives its pool or its host."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from verl_rewards import RewardError, Scorer
from verl_rewards.errors import ExecutorError, PluginLoadError

TIMEOUT_S = 1
BOUND_S = TIMEOUT_S + 2  # the bound for a fault to be stopped

FAULTS = '''
import ctypes
import os
import signal
import sys
import time

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "retry":  # a retry loop whose bare except swallows the timeout
        for _ in range(10):
            try:
                time.sleep(1)
                raise OSError("flaky service")
            except:
                pass
        return 0.0
    if solution_str == "forever":  # a while True loop with a bare except: never ends
        while True:
            try:
                time.sleep(0.01)
            except:
                pass
    if solution_str == "c_sleep":  # in C, the GIL released
        ctypes.CDLL(None).sleep(60)
    if solution_str == "gil_sleep":  # in C holding the GIL: no thread of the worker runs
        ctypes.PyDLL(None).sleep(60)
    if solution_str == "exit":
        os._exit(13)
    if solution_str == "segfault":
        ctypes.string_at(0)
    if solution_str == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
    if solution_str == "sys_exit":
        sys.exit("bye")
    if solution_str == "interrupt":
        raise KeyboardInterrupt("the reward's own")
    if solution_str == "print":
        print("\\x00garbage " * 1_000_000)  # about 10 MB
        sys.stdout.write("x" * 3_000_000)
        return {"score": float(ground_truth == "1"), "printed": True}
    return {"score": float(solution_str == ground_truth), "pid": os.getpid()}
'''

SHAPES = '''
import asyncio
import os
import threading

async def async_score(data_source, solution_str, ground_truth, extra_info=None):
    await asyncio.sleep(0.01)
    return float(solution_str == ground_truth)

def batch_score(data_sources, solution_strs, ground_truths, extra_infos):
    return [{"score": float(s == g), "pid": os.getpid()} for s, g in zip(solution_strs, ground_truths)]

class Counter:
    def __init__(self, scale=1.0):
        self.scale, self.calls = scale, 0
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        self.calls += 1
        return {"score": self.scale * float(solution_str == ground_truth), "calls": self.calls}

def leaky(data_source, solution_str, ground_truth, extra_info=None):
    global HELD
    HELD = globals().get("HELD", []) + [bytearray(60 * 2**20)]
    return {"score": 1.0, "pid": os.getpid()}

def unsendable(data_source, solution_str, ground_truth, extra_info=None):
    extra = {"tag": threading.Lock()} if solution_str == "lock" else {"tag": solution_str}
    return {"score": float(solution_str == ground_truth), **extra}
'''


def _rows(*texts: str, truth: str = "1") -> list[dict]:
    return [{"data_source": "d", "solution_str": t, "ground_truth": truth} for t in texts]


def _cfg(path: Path, name: str = "compute_score", **extra) -> dict:
    return {"path": str(path), "name": name, "executor": "process", "num_workers": 2,
            "timeout_s": TIMEOUT_S, **extra}


@pytest.fixture
def faults(reward_file) -> Path:
    return reward_file(FAULTS, "faults.py")


@pytest.fixture
def shapes(reward_file) -> Path:
    return reward_file(SHAPES, "shapes.py")


def _children() -> set[int]:
    """This process's children (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.add(int(entry.name))
    return found


def _exists(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def _score_with(scorer: Scorer, texts: list[str]):
    began = time.monotonic()
    result = scorer.score(_rows(*texts))
    return result, time.monotonic() - began


@pytest.mark.parametrize("fault", ["retry", "forever", "c_sleep", "gil_sleep"])
def test_a_call_that_swallows_its_timeout_or_blocks_in_c_is_a_timeout_within_the_bound(faults, fault):
    with Scorer.from_config(_cfg(faults)) as scorer:
        result, elapsed = _score_with(scorer, ["1", fault, "1", "0"])
        after = scorer.score(_rows("1", "1"))  # the pool goes on, on a replaced worker
    assert elapsed < BOUND_S
    assert result.statuses == ["ok", "timeout", "ok", "ok"]
    assert [result.scores[i] for i in (0, 2, 3)] == [1.0, 1.0, 0.0]
    assert result.errors[1].startswith("SampleTimeout: exceeded timeout_s=1")
    assert result.metrics["worker_restarts"] == 1
    assert after.scores == [1.0, 1.0] and os.getpid() not in after.extra_info["pid"]


def test_a_rewards_declared_timeout_bounds_a_call_stuck_in_c_under_timeout_s_auto(reward_file):
    path = reward_file('''
        import ctypes
        from verl_rewards.metadata import reward

        @reward(timeout_s=1)
        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            if solution_str == "c_sleep":
                ctypes.CDLL(None).sleep(60)
            return float(solution_str == ground_truth)
    ''', "declared.py")
    with Scorer.from_config({**_cfg(path), "timeout_s": "auto"}) as scorer:
        result, elapsed = _score_with(scorer, ["1", "c_sleep", "1"])
    assert elapsed < BOUND_S  # its declared 1 s, not the default 30 s
    assert result.statuses == ["ok", "timeout", "ok"]


@pytest.mark.parametrize(("fault", "how"), [("exit", "it exited with status 13"),
                                            ("segfault", "it was killed by signal 11 (SIGSEGV)"),
                                            ("sigterm", "it was killed by signal 15 (SIGTERM)")])
def test_a_reward_that_kills_its_worker_fails_only_its_sample_and_the_host_lives(faults, fault, how):
    with Scorer.from_config(_cfg(faults)) as scorer:
        result, elapsed = _score_with(scorer, ["1", "0", fault, "1"])
    assert elapsed < 60
    assert result.statuses == ["ok", "ok", "failed", "ok"]
    assert [result.scores[i] for i in (0, 1, 3)] == [1.0, 0.0, 1.0]
    assert result.errors[2] == ("WorkerDied: the reward worker process died while scoring this sample "
                                f"(2 times); not retried again; {how}")
    assert 1 <= result.metrics["worker_restarts"] <= 2


@pytest.mark.parametrize(("fault", "error"), [("sys_exit", "SystemExit: bye"),
                                              ("interrupt", "KeyboardInterrupt: the reward's own")])
def test_a_rewards_own_exit_or_interrupt_is_its_samples_failure_in_the_worker(faults, fault, error):
    with Scorer.from_config(_cfg(faults)) as scorer:
        result = scorer.score(_rows("1", fault, "1"))
    assert result.statuses == ["ok", "failed", "ok"]
    assert result.errors[1].startswith(f"{error} (at {faults}:")
    assert result.metrics["worker_restarts"] == 0


def test_a_reward_printing_megabytes_scores_and_its_output_never_reaches_the_replies(faults, capfd):
    with Scorer.from_config(_cfg(faults)) as scorer:
        result = scorer.score(_rows("print", "1", "print"))
    assert result.statuses == ["ok", "ok", "ok"] and result.scores == [1.0, 1.0, 1.0]
    assert result.extra_info["printed"] == [True, None, True]
    out, err = capfd.readouterr()
    assert "garbage" not in out and err.count("x" * 1000) >= 2  # a worker's stdout is our stderr


def test_a_batch_mixing_every_fault_completes_with_every_good_sample_scored(faults):
    texts = ["1", "0"] * 3 + ["forever", "c_sleep", "exit", "segfault", "sys_exit"] + ["1"] * 6
    with Scorer.from_config(_cfg(faults, chunk_size=4)) as scorer:
        result, elapsed = _score_with(scorer, texts)
    assert result.scores[:6] == [1.0, 0.0] * 3 and result.scores[-6:] == [1.0] * 6
    assert result.statuses[6:11] == ["timeout", "timeout", "failed", "failed", "failed"]
    assert elapsed < 60


def test_samples_keep_input_order_across_chunks_and_workers(faults):
    texts = [str(i % 3) for i in range(101)]
    with Scorer.from_config(_cfg(faults, chunk_size=7)) as scorer:
        result = scorer.score(_rows(*texts))
    assert result.scores == [float(t == "1") for t in texts]
    pids = set(result.extra_info["pid"])
    assert len(pids) == 2 and os.getpid() not in pids  # both workers took chunks


def test_async_batch_and_class_rewards_score_as_on_other_executors(shapes):
    with Scorer.from_config(_cfg(shapes, "async_score", max_concurrency=8)) as scorer:
        assert scorer.score(_rows("1", "0", "1")).scores == [1.0, 0.0, 1.0]
    with Scorer.from_config(_cfg(shapes, "batch_score", num_workers=1)) as scorer:
        result = scorer.score(_rows("1", "0", "1"))
        assert result.scores == [1.0, 0.0, 1.0] and len(set(result.extra_info["pid"])) == 1
    with Scorer.from_config(_cfg(shapes, "Counter", num_workers=1, kwargs={"scale": 2.0})) as scorer:
        first = scorer.score(_rows("1", "0"))
        second = scorer.score(_rows("1"))
    assert first.scores == [2.0, 0.0] and first.extra_info["calls"] == [1, 2]
    assert second.extra_info["calls"] == [3]  # one instance per worker, kept across batches


def test_on_error_raise_names_the_sample(faults):
    with Scorer.from_config(_cfg(faults, on_error="raise")) as scorer:
        with pytest.raises(RewardError, match=r"sample 1.*SampleTimeout"):
            scorer.score(_rows("1", "c_sleep", "1"))


def test_an_extra_value_that_cannot_be_sent_fails_only_its_sample(shapes):
    with Scorer.from_config(_cfg(shapes, "unsendable", num_workers=1)) as scorer:
        result = scorer.score(_rows("1", "lock", "0"))
    assert result.statuses == ["ok", "failed", "ok"]
    assert result.errors[1].startswith("RewardValueError: extra value 'tag' (lock) cannot be sent")


def test_max_sample_crashes_1_fails_the_culprit_at_its_first_precise_death(faults):
    with Scorer.from_config(_cfg(faults, max_sample_crashes=1, num_workers=1, chunk_size=9)) as scorer:
        result = scorer.score(_rows(*["1"] * 4, "exit", *["1"] * 4))
    assert result.statuses == ["ok"] * 4 + ["failed"] + ["ok"] * 4


def test_a_worker_is_recycled_after_worker_max_calls_chunks(faults):
    with Scorer.from_config(_cfg(faults, num_workers=1, chunk_size=2, worker_max_calls=2)) as scorer:
        result = scorer.score(_rows(*["1"] * 8))
    pids = result.extra_info["pid"]
    assert [len(set(pids[i:i + 4])) for i in (0, 4)] == [1, 1] and pids[0] != pids[4]
    assert result.metrics["worker_recycles"] == 2 and result.metrics["worker_restarts"] == 0


def test_a_worker_past_worker_max_rss_mb_is_recycled_between_chunks(shapes):
    cfg = _cfg(shapes, "leaky", num_workers=1, chunk_size=1, worker_max_rss_mb=200)
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score(_rows(*["1"] * 8))
    assert result.scores == [1.0] * 8
    assert len(set(result.extra_info["pid"])) >= 2 and result.metrics["worker_recycles"] >= 1


def test_a_reward_that_fails_to_load_raises_its_load_error_at_start(reward_file):
    path = reward_file("def compute_score(*args):\n    return 1.0\n\nraise RuntimeError('no model here')\n",
                       "broken.py")
    before = _children()
    with pytest.raises(PluginLoadError, match="no model here"):
        Scorer.from_config({**_cfg(path), "workers_only": True}).start()
    assert not (_children() - before)


class _OnlyHere:
    """A kwarg value of a class only this test module defines (pytest imports it by path)."""


def test_a_kwarg_a_worker_process_cannot_import_fails_at_start_saying_so(reward_file):
    path = reward_file("def compute_score(d, s, g, extra_info=None, helper=None):\n    return 1.0\n",
                       "helper.py")
    before = _children()
    with pytest.raises(ExecutorError, match=r"a reward worker process cannot receive the reward: "
                                            r"ModuleNotFoundError: .*or use reward.executor=local"):
        Scorer.from_config({**_cfg(path), "kwargs": {"helper": _OnlyHere()}}).start()
    assert not (_children() - before)


def test_closing_leaves_no_worker_process(faults):
    before = _children()
    with Scorer.from_config(_cfg(faults)) as scorer:
        result = scorer.score(_rows("1", "c_sleep", "1", "exit", "1"))  # replaced workers too
        workers = _children() - before
    used = set(result.extra_info["pid"]) - {None}
    assert len(workers) == 2 and used and result.metrics["worker_restarts"] >= 2
    assert not (_children() - before)
    assert not any(_exists(pid) for pid in workers | used)


HOST = '''
import json, os, sys, time
from verl_rewards import Scorer
scorer = Scorer.from_config({"path": sys.argv[1], "executor": "process", "num_workers": 2})
result = scorer.score([{"data_source": "d", "solution_str": "1", "ground_truth": "1"}] * 4)
print(json.dumps(sorted(set(result.extra_info["pid"]))), flush=True)
time.sleep(600)
'''


def test_workers_die_with_their_host_even_when_it_is_killed(faults, tmp_path):
    host = subprocess.Popen([sys.executable, "-c", HOST, str(faults)], stdout=subprocess.PIPE, text=True)
    try:
        line = host.stdout.readline()
        workers = json.loads(line)
        assert workers and all(_exists(pid) for pid in workers)
    finally:
        host.kill()
        host.wait(30)
    deadline = time.monotonic() + 10
    while any(_exists(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_exists(pid) for pid in workers)


def test_workers_started_from_a_thread_that_ends_keep_working(faults):
    scorer = Scorer.from_config(_cfg(faults))
    starter = threading.Thread(target=scorer.start)
    starter.start()
    starter.join(120)
    try:
        time.sleep(0.5)  # a worker tied to the starter's life would be dead by now
        result = scorer.score(_rows("1", "1", "1", "1"))
    finally:
        scorer.close()
    assert result.scores == [1.0] * 4 and result.metrics["worker_restarts"] == 0


def _score_in_daemon(path: str, conn) -> None:
    with Scorer.from_config(_cfg(Path(path))) as scorer:
        conn.send(scorer.score(_rows("1", "c_sleep", "0")).statuses)


def test_a_daemonic_multiprocessing_worker_can_host_the_pool(faults):
    parent, child = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(target=_score_in_daemon,
                                                           args=(str(faults), child), daemon=True)
    process.start()
    try:
        assert parent.poll(120)
        assert parent.recv() == ["ok", "timeout", "ok"]
    finally:
        process.join(30)


def _score_in_fork(scorer: Scorer, conn) -> None:
    result = scorer.score(_rows("1", "0"))
    conn.send((result.scores, sorted(set(result.extra_info["pid"]))))
    scorer.close()


def test_a_forked_copy_starts_workers_of_its_own_and_leaves_the_parents_alone(faults):
    with Scorer.from_config(_cfg(faults)) as scorer:
        mine = set(scorer.score(_rows(*["1"] * 8)).extra_info["pid"])
        parent, child = multiprocessing.get_context("fork").Pipe()
        process = multiprocessing.get_context("fork").Process(target=_score_in_fork, args=(scorer, child))
        process.start()
        assert parent.poll(120)
        scores, theirs = parent.recv()
        process.join(30)
        again = set(scorer.score(_rows(*["1"] * 8)).extra_info["pid"])
    assert scores == [1.0, 0.0] and not set(theirs) & mine
    assert again == mine  # the child closed its own workers, not ours


def test_the_process_executor_imports_no_ray(faults):
    code = textwrap.dedent(f'''
        import sys
        from verl_rewards import Scorer
        with Scorer.from_config({{"path": {str(faults)!r}, "executor": "process"}}) as scorer:
            assert scorer.score([{{"data_source": "d", "solution_str": "1", "ground_truth": "1"}}]).scores == [1.0]
        print("ray" in sys.modules)
    ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_a_host_interrupted_while_scoring_replaces_the_busy_worker(faults):
    scorer = Scorer.from_config(_cfg(faults, timeout_s=30, num_workers=1)).start()
    try:
        interrupter = threading.Timer(0.5, lambda: signal.pthread_kill(threading.main_thread().ident,
                                                                       signal.SIGINT))
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            scorer.score(_rows("c_sleep"))
        result = scorer.score(_rows("1"))
    finally:
        scorer.close()
    assert result.scores == [1.0]

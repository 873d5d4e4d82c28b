"""`verl-rewards score` as a real process: stdin/stdout, a real Ctrl-C then --resume,
bounded memory on a large input, and a reward thread that never ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

SLOW = """
import time

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    time.sleep(0.002)
    return float(solution_str == ground_truth)
"""

THREAD_FOREVER = """
import threading

threading.Thread(target=threading.Event().wait, name="never-ends").start()  # at import

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    threading.Thread(target=threading.Event().wait, name="never-ends-either").start()
    return 1.0
"""


PEAK_OF_CHILD = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def _cli(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "verl_rewards", "score", "--no-progress", *args],
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def _rows(n: int, width: int = 0) -> str:
    pad = "x" * width
    return "".join(json.dumps({"id": i, "data_source": "d", "solution_str": f"{pad}{i % 2}",
                               "ground_truth": f"{pad}1"}) + "\n" for i in range(n))


def test_stdin_to_stdout_is_jsonl_with_the_summary_on_stderr():
    proc = _cli("-i", "-", "-o", "-", "reward.plugin=exact_match", "reward.executor=local",
                stdin=subprocess.PIPE)
    out, err = proc.communicate(_rows(5), timeout=120)
    assert proc.returncode == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["id"], r["score"]) for r in rows] == [(i, float(i % 2)) for i in range(5)]
    assert "scored 5 samples" in err and "wrote 5 rows to <stdout>" in err


def test_ctrl_c_leaves_whole_rows_and_resume_scores_each_remaining_row_once(tmp_path,
                                                                            reward_file):
    path, n = reward_file(SLOW), 3000
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(_rows(n))
    args = ["-i", str(source), "-o", str(target), "--batch-size", "20", f"reward.path={path}",
            "reward.executor=local"]
    proc = _cli(*args)
    deadline = time.monotonic() + 60
    while (not target.exists() or target.stat().st_size < 5000) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    partial = target.read_text()
    assert partial.endswith("\n") and "add --resume to continue" in err
    kept = [json.loads(line)["id"] for line in partial.splitlines()]
    assert kept == list(range(len(kept))) and 0 < len(kept) < n

    resumed = _cli(*args, "--resume")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    ids = [json.loads(line)["id"] for line in target.read_text().splitlines()]
    assert ids == list(range(n))  # each row exactly once, in input order
    assert f"({len(kept)} kept from the earlier run)" in out


def test_peak_memory_stays_bounded_on_a_110_mb_input(tmp_path):
    source = tmp_path / "big.jsonl"
    with source.open("w") as file:
        for start in range(0, 200_000, 10_000):
            file.write(_rows(10_000, width=250).replace('"id": ', f'"base": {start}, "id": '))
    size_mb = source.stat().st_size / 2**20
    argv = [sys.executable, "-m", "verl_rewards", "score", "--no-progress", "-i", str(source),
            "-o", str(tmp_path / "out.jsonl"), "reward.plugin=exact_match", "reward.executor=local"]
    # A fresh parent, so that the peak is this child's alone (pytest's other children count too).
    measured = subprocess.run([sys.executable, "-c", PEAK_OF_CHILD, *argv], text=True,
                              capture_output=True, timeout=300)
    assert measured.returncode == 0, measured.stderr
    peak_mb = float(measured.stdout.split()[-1])
    print(f"input {size_mb:.0f} MB, 200000 rows: peak RSS of score {peak_mb:.0f} MB")
    assert size_mb > 100
    assert peak_mb < 100  # the input's text alone would not fit
    assert os.path.getsize(tmp_path / "out.jsonl") > source.stat().st_size


def test_a_thread_the_reward_never_ends_does_not_keep_score_alive(tmp_path, reward_file):
    path = reward_file(THREAD_FOREVER)
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(_rows(3))
    began = time.monotonic()
    proc = _cli("-i", str(source), "-o", str(target), f"reward.path={path}",
                "reward.executor=local")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert time.monotonic() - began < 30
    assert len(target.read_text().splitlines()) == 3 and "wrote 3 rows" in out
    # The threads its calls start are daemon threads, as the local executor's thread is
    # (they never kept the process alive); the one its import started in the main thread is not.
    assert "1 thread(s) still running, started by the reward and never ended: never-ends\n" in err


def test_a_plugin_that_prints_at_import_never_reaches_the_rows_on_stdout(make_dist):
    info = make_dist("chatty-rewards", "1.0", {"chatty": "tp_chatty:score"}, {"tp_chatty.py": """
        import os
        print("chatty: loading")
        os.write(1, b"chatty: native write\\n")  # as a C library would

        def score(data_source, solution_str, ground_truth, extra_info=None):
            return 1.0
    """})
    env = {**os.environ, "PYTHONPATH": str(info.parent)}
    proc = _cli("-i", "-", "-o", "-", "reward.plugin=chatty", "reward.executor=local",
                stdin=subprocess.PIPE, env=env)
    out, err = proc.communicate(_rows(3), timeout=120)
    assert proc.returncode == 0, err
    assert [json.loads(line)["score"] for line in out.splitlines()] == [1.0, 1.0, 1.0]
    assert "chatty: loading" in err and "chatty: native write" in err

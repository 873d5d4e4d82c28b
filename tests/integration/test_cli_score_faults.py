"""`verl-rewards score` under real faults: a `kill -9` in the middle of a Parquet run and a
full disk (a small tmpfs, mounted as root as CI runs) lose no finished row, and `--resume`
continues each time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

SLOW = """
import time

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    time.sleep(0.002)
    return 1.0
"""

STOPS_WHILE_MARKED = """
from pathlib import Path

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if extra_info["id"] == {stop} and Path(__file__ + ".stop").exists():
        raise RuntimeError("stopped on purpose")
    return 1.0
"""


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "verl_rewards", "score", "--no-progress", *args,
                             "reward.executor=local"],
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _rows(n: int, width: int = 0) -> str:
    return "".join(json.dumps({"data_source": "d", "solution_str": os.urandom(width).hex(),
                               "ground_truth": "1", "extra_info": {"id": i}}) + "\n"
                   for i in range(n))


def _ids(path: Path) -> list[int]:
    return [e["id"] for e in pq.read_table(path).column("extra_info").to_pylist()]


def test_kill_9_during_a_parquet_run_keeps_the_finished_batches_for_resume(tmp_path, reward_file):
    path, n = reward_file(SLOW), 3000
    source, target = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    source.write_text(_rows(n))
    parts = tmp_path / ".out.parquet.parts"
    args = ["-i", str(source), "-o", str(target), "--batch-size", "20", f"reward.path={path}"]
    proc = _cli(*args)
    deadline = time.monotonic() + 60
    while len(list(parts.glob("*.parquet"))) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not target.exists()  # nothing merged: the rows are in the parts
    finished = sum(pq.ParquetFile(p).metadata.num_rows for p in parts.glob("*.parquet"))
    assert 0 < finished < n
    (tmp_path / ".out.parquet.99999.tmp").write_bytes(b"PAR1")  # as a merge killed midway leaves

    resumed = _cli(*args, "--resume")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert _ids(target) == list(range(n))  # each row once, in input order
    assert f"({finished} kept from the earlier run)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".out.parquet.run.json", "in.jsonl", "my_reward.py", "out.parquet"]


@pytest.fixture
def small_disk(make_tmpfs: Callable[[str], Path]) -> Path:
    """A real 3 MiB file system (tmpfs), unmounted afterwards."""
    return make_tmpfs("3m")


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until ``leave`` bytes are free."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(stats.f_bavail * stats.f_frsize - leave, 0))
    return filler


@pytest.mark.parametrize("fails", ["while merging", "while writing a batch"])
def test_a_full_disk_during_resume_never_replaces_the_earlier_parquet_output(
        tmp_path, small_disk, reward_file, fails):
    path, n = reward_file(STOPS_WHILE_MARKED.replace("{stop}", "1000")), 2000
    Path(f"{path}.stop").write_text("")
    source, target = tmp_path / "in.jsonl", small_disk / "out.parquet"
    source.write_text(_rows(n, width=200))
    args = ["-i", str(source), "-o", str(target), "--batch-size", "100", f"reward.path={path}",
            "reward.on_error=raise"]
    first = _cli(*args)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 1 and "holds 1000 whole rows" in err, err
    earlier = target.read_bytes()
    assert _ids(target) == list(range(1000))

    Path(f"{path}.stop").unlink()
    # The rest needs about the output's size again for its parts, and twice that to merge.
    leave = len(earlier) * 3 // 2 if fails == "while merging" else len(earlier) // 4
    filler = _fill(small_disk, leave)
    full = _cli(*args, "--resume")
    _, err = full.communicate(timeout=120)
    assert full.returncode == 1, err
    assert "No space left on device" in err and "--resume" in err
    if fails == "while merging":
        assert f"{target} is as it was (1000 rows) and 1000 more rows wait in " in err
    assert target.read_bytes() == earlier  # the good output, untouched
    assert not list(small_disk.glob(".out.parquet.*.tmp"))

    filler.unlink()
    resumed = _cli(*args, "--resume")
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert _ids(target) == list(range(n))


def test_a_full_disk_during_a_jsonl_run_keeps_whole_lines_for_resume(tmp_path, small_disk,
                                                                      reward_file):
    path, n = reward_file(SLOW), 2000
    source, target = tmp_path / "in.jsonl", small_disk / "out.jsonl"
    source.write_text(_rows(n, width=200))
    filler = _fill(small_disk, source.stat().st_size // 3)
    args = ["-i", str(source), "-o", str(target), "--batch-size", "100", f"reward.path={path}"]
    full = _cli(*args)
    _, err = full.communicate(timeout=120)
    assert full.returncode == 1, err
    assert f"cannot write {target}: [Errno 28] No space left on device; the whole rows" in err
    filler.unlink()
    resumed = _cli(*args, "--resume")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    ids = [json.loads(line)["extra_info"]["id"] for line in target.read_text().splitlines()]
    assert ids == list(range(n)) and " kept from the earlier run)" in out


# -- a reward that exits, interrupts itself, or catches everything (issue 26, items 1, 10) --

EXITS = """
import sys

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "exit":
        sys.exit(0)
    if solution_str == "interrupt":
        raise KeyboardInterrupt
    return float(solution_str == ground_truth)
"""

CATCHES_EVERYTHING = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "stuck":
        while True:
            try:
                while True:
                    pass
            except:  # noqa: E722 - the timeout, a Ctrl-C: swallowed alike
                pass
    return 1.0
"""


def _texts(*texts: str) -> str:
    return "".join(json.dumps({"data_source": "d", "solution_str": t, "ground_truth": "1"}) + "\n"
                   for t in texts)


def test_a_reward_calling_sys_exit_fails_its_row_and_the_run_writes_every_row(tmp_path, reward_file):
    path = reward_file(EXITS)
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(_texts("1", "exit", "0", "interrupt", "1"))
    proc = _cli("-i", str(source), "-o", str(target), f"reward.path={path}")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "failed", "ok", "failed", "ok"]
    assert rows[1]["error"] == f"SystemExit: 0 (at {path}:6 in compute_score)"
    assert rows[3]["error"] == f"KeyboardInterrupt: (at {path}:8 in compute_score)"
    assert "errors by type: SystemExit 1, KeyboardInterrupt 1" in out


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never held {n} rows")


def test_a_real_ctrl_c_stops_the_run_even_while_a_reward_swallows_every_interrupt(
        tmp_path, reward_file):
    path = reward_file(CATCHES_EVERYTHING)
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(_texts("1", "1", "1", "1", "stuck", "1"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "verl_rewards", "score", "--no-progress", "-i", str(source), "-o",
         str(target), "--batch-size", "2", f"reward.path={path}", "reward.executor=local",
         "reward.timeout_s=60"],
        text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a terminal's child
    try:
        _wait_for_lines(target, 4, proc)
        time.sleep(0.5)  # the third batch is in the reward's loop now
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert f"verl-rewards: interrupted: {target} holds 4 whole rows; add --resume to continue" in err
    assert len(target.read_text().splitlines()) == 4


def test_a_reward_no_interrupt_can_stop_fails_the_run_past_the_grace_saying_only_ray_can(
        tmp_path, reward_file):
    path = reward_file(CATCHES_EVERYTHING)
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(_texts("1", "1", "stuck", "1"))
    argv = ["verl-rewards", "score", "--no-progress", "-i", str(source), "-o", str(target),
            "--batch-size", "2", f"reward.path={path}", "reward.executor=local", "reward.timeout_s=0.5"]
    # The real command, with a 1 s grace instead of the documented 10 s to keep the test short.
    script = ("import sys; from verl_rewards import watchdog; watchdog.HARD_GRACE_S = 1.0; "
              f"sys.argv = {argv!r}; from verl_rewards.cli.main import console_main; console_main()")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith(f"verl-rewards: error: reward compute_score (file {path}, sha256 ")
    assert "past its allowed 0.5 s and the local executor's 1 s grace" in error
    assert "only the Ray executor (reward.executor=ray) can kill it" in error
    assert f"(it is at {path}:" in error and " in compute_score)" in error
    assert error.endswith(f"; {target} holds 2 whole rows; add --resume to continue")
    assert len(target.read_text().splitlines()) == 2

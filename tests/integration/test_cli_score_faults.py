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

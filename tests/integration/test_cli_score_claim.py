"""Two real `verl-rewards score` processes onto one output: the second is refused naming the
first, touching nothing; a claim dies with its owner (a real `kill -9`) and is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

# Each scoring call waits while the gate file exists; the pid file says scoring has begun.
GATED = """
import os
import time
from pathlib import Path

GATE = Path(__file__).with_name("gate")

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    Path(__file__).with_name(f"scoring.{os.getpid()}").touch()  # the local executor: the CLI's pid
    deadline = time.monotonic() + 60
    while GATE.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return float(solution_str == ground_truth)
"""


def _rows(tag: str, n: int = 30) -> str:
    return "".join(json.dumps({"data_source": tag, "solution_str": str(i), "ground_truth": str(i),
                               "extra_info": {"id": i}}) + "\n" for i in range(n))


def _score(source: Path, target: Path, reward: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "verl_rewards", "score", "--no-progress", "-i", str(source),
                             "-o", str(target), "--batch-size", "10", f"reward.path={reward}",
                             "reward.executor=local", "reward.timeout_s=120"],
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def _read(target: Path) -> list[tuple[str, int, float]]:
    rows = (pq.read_table(target).to_pylist() if target.suffix == ".parquet" else
            [json.loads(line) for line in target.read_text().splitlines()])
    return [(r["data_source"], r["extra_info"]["id"], r["score"]) for r in rows]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_second_run_onto_an_output_being_written_is_refused_naming_the_first(tmp_path: Path, suffix: str) -> None:
    reward = tmp_path / "gated.py"
    reward.write_text(GATED)
    gate = tmp_path / "gate"
    gate.touch()
    first_in, second_in, target = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / f"out{suffix}"
    first_in.write_text(_rows("first"))
    second_in.write_text(_rows("second"))
    first = _score(first_in, target, reward)
    try:
        _wait_for(tmp_path / f"scoring.{first.pid}", first)  # past every check, scoring its first batch
        second = _score(second_in, target, reward)
        try:
            _, err = second.communicate(timeout=60)
        finally:
            second.kill()
        assert second.returncode == 2, err
        assert f"output file {target} is being written by another run (pid {first.pid}, started " in err
        assert not list(tmp_path.glob(f"scoring.{second.pid}"))  # refused before it scored
    finally:
        gate.unlink()
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert _read(target) == [("first", i, 1.0) for i in range(30)]  # the first run's rows, whole
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [f".out{suffix}.run.json"]


def test_the_claim_of_a_run_killed_with_kill_9_is_taken_over(tmp_path: Path) -> None:
    reward = tmp_path / "gated.py"
    reward.write_text(GATED)
    gate = tmp_path / "gate"
    gate.touch()
    source, target = tmp_path / "a.jsonl", tmp_path / "out.jsonl"
    source.write_text(_rows("first"))
    owner = _score(source, target, reward)
    _wait_for(tmp_path / f"scoring.{owner.pid}", owner)
    lock = tmp_path / ".out.jsonl.lock"
    assert json.loads(lock.read_text())["pid"] == owner.pid
    os.kill(owner.pid, signal.SIGKILL)
    owner.communicate(timeout=60)
    assert lock.exists()  # what a killed owner leaves: a file, but no lock held

    gate.unlink()
    next_run = _score(source, target, reward)
    _, err = next_run.communicate(timeout=120)
    assert next_run.returncode == 0, err
    assert _read(target) == [("first", i, 1.0) for i in range(30)]
    assert not lock.exists()

"""A Scorer on the Ray executor, started from Python, keeps Ray's start-up lines off the
caller's stderr, as the CLI and the trainer do (a level the user sets still wins)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

pytestmark = pytest.mark.slow

PROGRAM = """
from verl_rewards import Scorer
with Scorer.from_config({"plugin": "exact_match", "num_workers": 1, "worker_num_cpus": 0}) as scorer:
    print(scorer.score([{"data_source": "d", "solution_str": "1", "ground_truth": "1"}]).scores)
"""


def test_starting_a_local_ray_session_prints_only_what_the_program_prints():
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_LOGGER_LEVEL", "RAY_ADDRESS")}
    ray_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # its own local Ray session, never a test's
    try:
        done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                              env={**env, "RAY_TMPDIR": ray_dir}, timeout=240)
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)
    assert (done.returncode, done.stdout) == (0, "[1.0]\n"), done.stderr
    assert "Started a local Ray instance" not in done.stderr and "INFO" not in done.stderr, done.stderr

"""A reward that kills its Ray node (issue 15 row 7), on a second node this
test starts and stops itself: its samples are re-run elsewhere, none is
marked a timeout, and the next batch returns."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from verl_rewards import Scorer

pytestmark = pytest.mark.ray


def _processes_with(marker: bytes, command: bytes = b"") -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "environ").read_bytes() and command in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _alive_nodes() -> int:
    return sum(1 for n in ray.nodes() if n["Alive"])


@pytest.fixture
def second_node(ray_session) -> Iterator[bytes]:
    """A second Ray node (2 CPUs) joined to the test session, with token auth
    as the session has it; yields the environment marker of its processes and
    stops exactly those processes at the end."""
    marker = f"VERL_REWARDS_TEST_NODE={uuid.uuid4().hex}"
    key, value = marker.split("=")
    env = {**os.environ, key: value, "VERL_REWARDS_TEST_KILLABLE_NODE": "1", "RAY_AUTH_MODE": "token"}
    before = _alive_nodes()
    ray_cli = Path(sys.executable).with_name("ray")
    # Its own temp dir: `ray start` records the cluster address there, and in the
    # default one it would make every later bare ray.init() on this machine join us.
    temp_dir = tempfile.mkdtemp(prefix="vr-node-")
    subprocess.run([str(ray_cli), "start", f"--address={ray.get_runtime_context().gcs_address}",
                    "--num-cpus=2", "--object-store-memory=100000000", f"--temp-dir={temp_dir}",
                    "--disable-usage-stats"], env=env, check=True, capture_output=True, timeout=120)
    try:
        deadline = time.monotonic() + 60
        while _alive_nodes() <= before and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive_nodes() == before + 1, "the second node never joined"
        yield marker.encode()
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in _processes_with(marker.encode()):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 15
            while _processes_with(marker.encode()) and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_a_reward_that_kills_its_node_fails_no_good_sample_and_the_next_batch_returns(second_node):
    # One 2-CPU worker fits on each node; only the second node's worker kills its node.
    cfg = {"plugin": "node_killer", "executor": "ray", "num_workers": 2, "worker_num_cpus": 2,
           "chunk_size": 2, "timeout_s": 10}
    rows = [{"data_source": "d", "solution_str": "kill_node", "ground_truth": "kill_node"}] * 12
    with Scorer.from_config(cfg) as scorer:
        raylets = _processes_with(second_node, b"raylet")
        assert raylets
        began = time.monotonic()
        first = scorer.score(rows)
        first_s = time.monotonic() - began
        assert not any(p in _processes_with(second_node) for p in raylets), "the node was not killed"
        began = time.monotonic()
        second = scorer.score(rows[:4])
        second_s = time.monotonic() - began
    assert first.statuses == ["ok"] * 12 and first.scores == [1.0] * 12
    assert first.metrics["worker_restarts"] >= 1
    assert second.statuses == ["ok"] * 4
    assert first_s < 90 and second_s < 30

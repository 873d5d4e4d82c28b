"""Joining, starting and sharing the Ray session, in fresh processes (issue 15
rows 2, 8 and 19): a session verl-rewards starts is shut down by its last
user only, a bad address fails fast with what to do, and a Ctrl-C while Ray
starts leaves no Ray process of that session behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

CFG = '{"plugin": "exact_match", "executor": "ray", "num_workers": 1, "worker_num_cpus": 0}'


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE")}
    return {**env, **extra}


def _run(script: str, timeout: float, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=timeout, env=_env(**env))


def _processes_with(marker: str, command: str = "") -> list[int]:
    """Pids of this user's processes whose environment holds ``marker`` (and
    whose command line holds ``command``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes() and (
                    command.encode() in (entry / "cmdline").read_bytes()):
                found.append(int(entry.name))
        except OSError:  # gone, or another user's
            continue
    return found


def _wait_for_agents(marker: str, failure: str) -> None:
    """Wait (60 s at most) until the Ray session of ``marker`` runs its dashboard agents;
    fail saying ``failure`` if it never does."""
    deadline = time.monotonic() + 60
    while not _processes_with(marker, "dashboard/agent.py") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _processes_with(marker, "dashboard/agent.py"), failure


def _assert_none_left(marker: str) -> None:
    """Every process of ``marker`` ends within 10 s (a bare interrupted ray.init leaves
    them for minutes); any left are killed, not leaked into other tests, and fail the test."""
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = _processes_with(marker)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):  # it may exit meanwhile
            os.kill(pid, signal.SIGKILL)
    assert left == []


def test_closing_one_scorer_leaves_the_session_another_still_uses():
    result = _run(f"""
        import ray
        from verl_rewards import Scorer
        rows = [{{"data_source": "d", "solution_str": t, "ground_truth": "1"}} for t in "10"]
        first, second = Scorer.from_config({CFG}).start(), Scorer.from_config({CFG}).start()
        first.close()
        print(second.score(rows).scores, ray.is_initialized())
        second.close()
        print(ray.is_initialized())
    """, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[-2:] == ["[1.0, 0.0] True", "False"]


def test_an_address_nothing_listens_on_fails_fast_saying_what_to_do():
    began = time.monotonic()
    result = _run(f"""
        from verl_rewards import Scorer
        from verl_rewards.errors import ExecutorError
        try:
            Scorer.from_config({{**{CFG}, "ray_address": "127.0.0.1:1"}}).start()
        except ExecutorError as e:
            print("ExecutorError:", e)
    """, timeout=120)
    assert time.monotonic() - began < 30
    assert "ExecutorError: cannot reach a Ray cluster at 127.0.0.1:1" in result.stdout
    assert "ray start --head" in result.stdout and "reward.ray_address" in result.stdout


def test_a_token_auth_cluster_joined_without_token_mode_says_how_to_set_it(ray_session):
    import ray

    address = ray.get_runtime_context().gcs_address
    began = time.monotonic()
    result = _run(f"""
        from verl_rewards import Scorer
        from verl_rewards.errors import ExecutorError
        try:
            Scorer.from_config({{**{CFG}, "ray_address": "{address}"}}).start()
        except ExecutorError as e:
            print("ExecutorError:", e)
    """, timeout=120)
    assert time.monotonic() - began < 90
    assert f"ExecutorError: cannot connect to the Ray cluster at {address}" in result.stdout, result.stderr[-2000:]
    assert "RAY_AUTH_MODE=token" in result.stdout


def test_ctrl_c_while_ray_starts_leaves_no_process_of_that_session():
    marker = f"VERL_REWARDS_TEST_SESSION={uuid.uuid4().hex}"
    key, value = marker.split("=")
    script = f"""
        import sys
        from verl_rewards import Scorer
        print("starting", flush=True)
        try:
            Scorer.from_config({CFG}).start()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
        print("started", flush=True)
    """
    # Its own process group, which a terminal's Ctrl-C signals as a whole.
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=_env(**{key: value}),
                             start_new_session=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "starting\n"
        # The agents the raylet starts are the processes a bare interrupted
        # ray.init leaves behind: interrupt once they exist, before ray.init returns.
        _wait_for_agents(marker, "Ray never started its agents")
        os.killpg(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=90)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
    assert out.strip() == "interrupted" and child.returncode == 130
    _assert_none_left(marker)


# -- a stale ray_current_cluster (issue 26, item 19) ------------------------------------------


@pytest.fixture
def stale_cluster_file() -> Iterator[tuple[Path, str]]:
    """A private Ray temp root (for a child's RAY_TMPDIR) whose ``ray/ray_current_cluster``
    names a port nothing listens on: what `ray start --head` leaves after a `kill -9`.
    Ray's real /tmp/ray, which other sessions on this machine read, is never touched."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    root = Path(tempfile.mkdtemp(prefix="vr", dir="/tmp"))  # short: Ray's socket paths are capped
    (root / "ray").mkdir()
    (root / "ray" / "ray_current_cluster").write_text(address)
    yield root, address
    shutil.rmtree(root, ignore_errors=True)


def _score_on_ray(root: Path, marker: str, tmp_path: Path) -> subprocess.Popen[str]:
    source = tmp_path / "in.jsonl"
    source.write_text('{"data_source": "d", "solution_str": "1", "ground_truth": "1"}\n')
    key, value = marker.split("=")
    return subprocess.Popen(
        [sys.executable, "-m", "verl_rewards", "score", "--no-progress", "-i", str(source), "-o",
         str(tmp_path / "out.jsonl"), "reward.plugin=exact_match", "reward.executor=ray",
         "reward.num_workers=1", "reward.worker_num_cpus=0"],
        text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_env(RAY_TMPDIR=str(root), **{key: value}))


def _stale_warning(root: Path, address: str) -> str:
    return (f"ignoring {root}/ray/ray_current_cluster: nothing answers at {address}, the address "
            f"it records (ConnectionRefusedError: [Errno 111] Connection refused), so the cluster "
            f"started there with `ray start` has ended without `ray stop`. Starting a local Ray "
            f"session instead")


def test_a_stale_cluster_file_starts_a_fresh_session_that_sigterm_stops_leaving_nothing(
        stale_cluster_file, tmp_path):
    """Before: `ray.init()` joined the dead address, printed nothing for minutes and did
    not stop on SIGTERM. Now a local session starts at once (in the private root) and a
    SIGTERM during its start ends the run like Ctrl-C, with every Ray process it started."""
    root, address = stale_cluster_file
    marker = f"VERL_REWARDS_TEST_SESSION={uuid.uuid4().hex}"
    proc = _score_on_ray(root, marker, tmp_path)
    try:
        _wait_for_agents(marker, "Ray never started a local session")
        proc.send_signal(signal.SIGTERM)  # as `kill` or a job scheduler sends it
        _, err = proc.communicate(timeout=90)  # the start ends, then Ray is shut down
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert _stale_warning(root, address) in err and "verl-rewards: interrupted" in err
    assert list((root / "ray").glob("session_*"))  # the fresh session lived in the private root
    _assert_none_left(marker)

"""``verl-rewards serve`` on Ray, as a user runs it: a request mixing healthy samples with
a Python hang, a C hang, a crash and a raise (each failed alone, the server stays ready);
two front ends sharing one pool that spans two nodes (a second Ray node this test starts),
and that pool replaced when it dies."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import ray

pytestmark = [pytest.mark.ray, pytest.mark.slow]

CLI = str(Path(sys.executable).with_name("verl-rewards"))


class Server(NamedTuple):
    proc: subprocess.Popen[str]
    url: str
    lines: list[str]


def start(*args: str, timeout_s: float = 180.0) -> Server:
    """`verl-rewards serve --port 0 ARGS` joined to this test's Ray session, once ready."""
    env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address, "RAY_AUTH_MODE": "token"}
    env.pop("VERL_REWARDS_TOKEN", None)
    proc = subprocess.Popen([CLI, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    lines: list[str] = []
    found: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "listening on " in line:
                found.put(line.split("listening on ")[1].split()[0])

    threading.Thread(target=pump, daemon=True).start()
    try:
        url = found.get(timeout=timeout_s)
    except queue.Empty:
        proc.kill()
        raise AssertionError(f"the server did not start: {''.join(lines)}") from None
    server = Server(proc, url, lines)
    deadline = time.monotonic() + timeout_s
    while call(server, "GET", "/readyz")[0] != 200:
        assert time.monotonic() < deadline, f"never ready: {''.join(lines)}"
        time.sleep(0.2)
    return server


def stop(server: Server, timeout_s: float = 90.0) -> int:
    server.proc.send_signal(signal.SIGTERM)
    try:
        return server.proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(10)
        raise AssertionError(f"no exit within {timeout_s} s of SIGTERM") from None


def call(server: Server, method: str, path: str, body: Any = None,
         timeout_s: float = 180.0) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _rows(*answers: str) -> list[dict[str, str]]:
    return [{"data_source": "d", "solution_str": a, "ground_truth": "1"} for a in answers]


def test_a_request_mixing_hangs_a_crash_and_a_raise_fails_each_alone_and_stays_ready(ray_session):
    server = start("reward.plugin=faulty", "reward.executor=ray", "reward.num_workers=2",
                   "reward.worker_num_cpus=0.5", "reward.timeout_s=3")
    try:
        began = time.monotonic()
        status, body = call(server, "POST", "/v1/score",
                            {"samples": _rows("1", "loop", "c_sleep", "exit", "raise", "1")})
        took = time.monotonic() - began
        ready_status, ready = call(server, "GET", "/readyz")
        after = call(server, "POST", "/v1/score", {"samples": _rows("1", "0")})
    finally:
        assert stop(server) == 0
    assert status == 200
    assert body["statuses"] == ["ok", "timeout", "timeout", "failed", "failed", "ok"]
    assert body["scores"] == [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    errors = body["errors"]
    assert errors[0] is None and errors[5] is None
    assert errors[1].startswith("SampleTimeout: exceeded timeout_s=3")
    assert "Python could not interrupt" in errors[2]
    assert errors[3].startswith("WorkerDied:")
    assert errors[4].startswith("RuntimeError: the reward raised on purpose (at ")
    assert took < 90
    assert ready_status == 200 and ready["state"] == "ready" and ready["restarts"] == 0
    assert after == (200, {**after[1], "scores": [1.0, 0.0], "statuses": ["ok", "ok"]})


# -- two nodes, two front ends, one pool ------------------------------------------------------


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
    """A second Ray node (2 CPUs) joined to the test session; yields the environment
    marker of its processes and stops exactly those processes at the end."""
    marker = f"VERL_REWARDS_TEST_NODE={uuid.uuid4().hex}"
    key, value = marker.split("=")
    env = {**os.environ, key: value, "RAY_AUTH_MODE": "token"}
    before = _alive_nodes()
    temp_dir = tempfile.mkdtemp(prefix="vr-node-")  # its own: no later bare ray.init joins it
    subprocess.run([str(Path(sys.executable).with_name("ray")), "start",
                    f"--address={ray.get_runtime_context().gcs_address}", "--num-cpus=2",
                    "--object-store-memory=100000000", f"--temp-dir={temp_dir}",
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


async def _score_on_both(a: Server, b: Server, n: int) -> tuple[Any, Any]:
    rows = _rows(*["1"] * n)
    return await asyncio.gather(asyncio.to_thread(call, a, "POST", "/v1/score", {"samples": rows}),
                                asyncio.to_thread(call, b, "POST", "/v1/score", {"samples": rows}))


def _pids(answer: tuple[int, Any]) -> set[int]:
    status, body = answer
    assert status == 200 and body["statuses"] == ["ok"] * len(body["statuses"]), body
    return set(body["extra_info"]["pid"])


def _pool_hosts() -> list[str]:
    return [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
            if a["name"].startswith("verl_rewards_serve_") and a["namespace"] == "verl_rewards"]


def test_two_front_ends_share_one_pool_across_two_nodes_and_a_dead_pool_is_replaced(second_node):
    # One 2-CPU worker fits on each node: the pool spans both.
    args = ("reward.plugin=exact_match", "reward.executor=ray", "reward.num_workers=2",
            "reward.worker_num_cpus=2", "reward.chunk_size=1", "reward.timeout_s=30", "--shared-pool")
    a = start(*args)
    b = None
    try:
        b = start(*args)
        first_a, first_b = asyncio.run(_score_on_both(a, b, 8))
        pool = _pids(first_a) | _pids(first_b)
        assert len(pool) == 2, "the two front ends did not score on one pool of two workers"
        assert pool & set(_processes_with(second_node)), "no worker ran on the second node"
        (host,) = _pool_hosts()

        ray.kill(ray.get_actor(host, namespace="verl_rewards"), no_restart=True)
        again_a, again_b = asyncio.run(_score_on_both(a, b, 4))
        ready_a, ready_b = call(a, "GET", "/readyz")[1], call(b, "GET", "/readyz")[1]
        assert _pids(again_a) | _pids(again_b) and len(_pool_hosts()) == 1
        assert ready_a["ready"] and ready_b["ready"]
        assert ready_a["restarts"] + ready_b["restarts"] >= 1
        last_error = ready_a["last_error"] or ready_b["last_error"] or ""
        assert "PoolHost" in last_error and "killed by `ray.kill`" in last_error
        assert "shared pool" in ready_a["pool"]
    finally:
        codes = [stop(s) for s in (a, b) if s is not None]
    assert codes == [0, 0]

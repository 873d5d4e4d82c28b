"""``verl-rewards serve`` on Ray, as a user runs it: a request mixing healthy samples with
a Python hang, a C hang, a crash and a raise (each failed alone, the server stays ready);
two front ends sharing one pool that spans two nodes (a second Ray node this test starts),
and that pool replaced when it dies."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
import ray

pytestmark = [pytest.mark.ray, pytest.mark.slow]



Server = Any  # conftest's ServeProcess(proc, url, lines)


@pytest.fixture(scope="module")
def start(launch_serve: Callable[..., Server]) -> Callable[..., Server]:
    """`verl-rewards serve --port 0 ARGS` joined to this test's Ray session, once ready."""

    def start(*args: str, timeout_s: float = 180.0) -> Server:
        env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address, "RAY_AUTH_MODE": "token"}
        env.pop("VERL_REWARDS_TOKEN", None)
        return launch_serve(args, env, timeout_s, lambda server: call(server, "GET", "/readyz")[0] == 200)

    return start


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


def test_a_request_mixing_hangs_a_crash_and_a_raise_fails_each_alone_and_stays_ready(ray_session, start,
                                                                                     stop_serve):
    server = start("reward.plugin=faulty", "reward.executor=ray", "reward.num_workers=2",
                   "reward.worker_num_cpus=0.5", "reward.timeout_s=3")
    try:
        began = time.monotonic()
        answers: list[tuple[int, Any]] = []
        mixed = threading.Thread(target=lambda: answers.append(call(
            server, "POST", "/v1/score", {"samples": _rows("1", "loop", "c_sleep", "exit", "raise", "1")})))
        mixed.start()
        while_stuck = []  # /readyz while a worker is stuck in C: the service itself is not
        while mixed.is_alive():
            while_stuck.append(call(server, "GET", "/readyz")[0])
            time.sleep(0.5)
        (status, body), = answers
        took = time.monotonic() - began
        ready_status, ready = call(server, "GET", "/readyz")
        after = call(server, "POST", "/v1/score", {"samples": _rows("1", "0")})
    finally:
        assert stop_serve(server, 90.0) == 0
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
    assert len(while_stuck) >= 3 and set(while_stuck) == {200}
    assert ready_status == 200 and ready["state"] == "ready" and ready["restarts"] == 0
    assert after == (200, {**after[1], "scores": [1.0, 0.0], "statuses": ["ok", "ok"]})


# -- two nodes, two front ends, one pool ------------------------------------------------------


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
            if a["name"].startswith("verl_rewards_pool_") and a["namespace"] == "verl_rewards"]


def test_two_front_ends_share_one_pool_across_two_nodes_and_a_dead_pool_is_replaced(second_node, start,
                                                                                    stop_serve):
    # One 2-CPU worker fits on each node: the pool spans both. The second front end is given
    # the same section in another order.
    args = ("reward.plugin=exact_match", "reward.executor=ray", "reward.num_workers=2",
            "reward.worker_num_cpus=2", "reward.chunk_size=1", "reward.timeout_s=30", "--shared-pool")
    a = start(*args)
    b = None
    try:
        b = start(*args[::-1])
        first_a, first_b = asyncio.run(_score_on_both(a, b, 8))
        pool = _pids(first_a) | _pids(first_b)
        assert len(pool) == 2, "the two front ends did not score on one pool of two workers"
        assert pool & set(second_node.processes()), "no worker ran on the second node"
        (host,) = _pool_hosts()

        ray.kill(ray.get_actor(host, namespace="verl_rewards"), no_restart=True)
        again_a, again_b = asyncio.run(_score_on_both(a, b, 4))
        ready_a, ready_b = call(a, "GET", "/readyz")[1], call(b, "GET", "/readyz")[1]
        assert _pids(again_a) | _pids(again_b) and len(_pool_hosts()) == 1
        assert ready_a["ready"] and ready_b["ready"]
        assert ready_a["restarts"] + ready_b["restarts"] >= 1
        last_error = ready_a["last_error"] or ready_b["last_error"] or ""
        assert last_error == "the shared pool's host died; it was created again"
        assert "the Ray cluster's shared pool" in ready_a["pool"]
    finally:
        codes = [stop_serve(s, 90.0) for s in (a, b) if s is not None]
    assert codes == [0, 0]
    said = "".join(a.lines) + "".join(b.lines if b is not None else [])
    assert f"verl-rewards: warning: the shared reward pool {host} died (" in said

"""serve.app: answers JSON can always hold."""

from __future__ import annotations

import json
import math

from verl_rewards.serve.app import dumps


def test_dumps_writes_plain_values_as_json():
    assert json.loads(dumps({"scores": [1.0, 0.5], "errors": [None, "E: x"]})) == {
        "scores": [1.0, 0.5], "errors": [None, "E: x"]}


def test_non_finite_extra_values_become_null_so_the_answer_stays_valid_json():
    text = dumps({"extra_info": {"ratio": [math.nan, 1.0, math.inf], "nested": [{"x": -math.inf}]}})
    assert json.loads(text) == {"extra_info": {"ratio": [None, 1.0, None], "nested": [{"x": None}]}}


def test_values_json_cannot_hold_are_written_as_text():
    class Thing:
        def __repr__(self) -> str:
            return "Thing()"

    assert json.loads(dumps({"extra_info": {"obj": [Thing()]}})) == {"extra_info": {"obj": ["Thing()"]}}


def test_a_pool_that_fails_again_after_replacement_answers_503_with_retry_after():
    import asyncio

    from aiohttp.test_utils import TestClient, TestServer

    from verl_rewards.config import load_config
    from verl_rewards.results import Provenance
    from verl_rewards.serve.app import build_app
    from verl_rewards.serve.metrics import Metrics
    from verl_rewards.serve.pool import OwnPool, PoolKeeper
    from verl_rewards.serve.settings import ServeSettings
    from verl_rewards.spec import spec_from_config

    config = load_config({"plugin": "exact_match", "executor": "local"})
    spec = spec_from_config(config)

    def broken_pool() -> OwnPool:  # starts, then its executor is gone: every call fails
        pool = OwnPool(spec, config)
        pool.close()
        return pool

    metrics = Metrics()
    keeper = PoolKeeper(broken_pool, metrics, "a pool that keeps failing")
    app = build_app(ServeSettings(), keeper, metrics, Provenance.of(spec))

    async def main() -> tuple[int, str, dict]:
        keeper.start()
        async with TestClient(TestServer(app)) as client:
            response = await client.post("/v1/score", json={"samples": [
                {"data_source": "d", "solution_str": "1", "ground_truth": "1"}]})
            return response.status, response.headers.get("Retry-After", ""), await response.json()

    try:
        status, retry_after, body = asyncio.run(main())
    finally:
        keeper.close()
    assert (status, retry_after) == (503, "1")
    assert body["error"].startswith("the reward pool failed while scoring: ExecutorError: ")
    assert keeper.status()["restarts"] >= 1

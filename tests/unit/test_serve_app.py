"""serve.app: a pool that keeps failing answers 503; /v1/info publishes the score identity."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from verl_rewards.config import load_config
from verl_rewards.results import Provenance
from verl_rewards.scorer import Scorer
from verl_rewards.serve.app import build_app
from verl_rewards.serve.metrics import Metrics
from verl_rewards.serve.pool import PoolKeeper
from verl_rewards.serve.settings import ServeSettings
from verl_rewards.spec import score_identity, spec_from_config

SAMPLE = {"data_source": "d", "solution_str": "1", "ground_truth": "1"}


def _serve(section: dict[str, Any], build: Callable[[], Scorer] | None,
           request: Callable[[TestClient], Any]) -> tuple[PoolKeeper, Any]:
    config = load_config(section)
    spec = spec_from_config(config)
    metrics = Metrics()
    keeper = PoolKeeper(build or (lambda: Scorer(spec, config).start()), metrics, "test pool")
    app = build_app(ServeSettings(), keeper, metrics, Provenance.of(spec), score_identity(spec, config))

    async def main() -> Any:
        keeper.start()
        async with TestClient(TestServer(app)) as client:
            return await request(client)

    try:
        return keeper, asyncio.run(main())
    finally:
        keeper.close()


def test_a_pool_that_fails_again_after_replacement_answers_503_with_retry_after():
    section = {"plugin": "exact_match", "executor": "local"}
    config = load_config(section)

    def broken_pool() -> Scorer:  # starts, then its executor is gone: every call fails
        scorer = Scorer(spec_from_config(config), config).start()
        scorer.close()
        return scorer

    async def post(client: TestClient) -> tuple[int, str, dict[str, Any]]:
        response = await client.post("/v1/score", json={"samples": [SAMPLE]})
        return response.status, response.headers.get("Retry-After", ""), await response.json()

    keeper, (status, retry_after, body) = _serve(section, broken_pool, post)
    assert (status, retry_after) == (503, "1")
    assert body["error"].startswith("the reward pool failed while scoring: ExecutorError: ")
    assert keeper.status()["restarts"] >= 1


def test_v1_info_publishes_the_score_identity_the_client_computes_for_the_same_section():
    section = {"rewards": {"a": {"plugin": "exact_match"}, "b": {"plugin": "exact_match", "weight": 0.5}},
               "route": {"*": ["a", "b"]}, "executor": "local", "timeout_s": 7}

    async def info(client: TestClient) -> dict[str, Any]:
        response = await client.get("/v1/info")
        return dict(await response.json())

    _, body = _serve(section, None, info)
    # The client's section in another key order, with other run and outcome settings.
    client = load_config({"executor": "ray", "num_workers": 8, "error_score": -1, "timeout_s": 7,
                          "route": {"*": ["a", "b"]},
                          "rewards": {"b": {"weight": 0.5, "plugin": "exact_match"}, "a": {"plugin": "exact_match"}}})
    identity = score_identity(spec_from_config(client), client)
    assert body["score_identity"] == {"key": identity.key, "parts": dict(identity.parts)}
    assert sorted(identity.parts) == ["kwargs", "reward", "rewards", "route", "timeout_s"]

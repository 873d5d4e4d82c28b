"""serve.app: one error middleware answers every error as JSON; the pool starts and stops
with the application; bodies nested too deep are refused; a pool that keeps failing answers
503; /v1/info publishes the score identity."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
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
        async with TestClient(TestServer(app)) as client:  # the pool starts and stops with the app
            return await request(client)

    return keeper, asyncio.run(main())


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


# -- the application in process (aiohttp's test server: a real socket) ---------------------

ROW = SAMPLE


def _app(**settings):
    config = load_config({"plugin": "exact_match", "executor": "local"})
    spec = spec_from_config(config)
    metrics = Metrics()
    keeper = PoolKeeper(lambda: Scorer(spec, config).start(), metrics, "local")
    app = build_app(ServeSettings(**settings), keeper, metrics, Provenance.of(spec),
                    score_identity(spec, config))
    return app, keeper


def _run(app, calls):
    async def main():
        async with TestClient(TestServer(app)) as client:
            return [await call(client) for call in calls]

    return asyncio.run(main())


async def _answer(response):
    return response.status, dict(response.headers), await response.json()


def test_building_the_app_starts_nothing_and_its_cleanup_closes_the_pool():
    import threading

    def pool_threads():
        return [t for t in threading.enumerate() if t.name == "verl-rewards-pool"]

    app, keeper = _app()
    assert pool_threads() == [] and keeper.state == "starting"

    async def score(client):
        return await _answer(await client.post("/v1/score", json={"samples": [ROW]}))

    (status, _, body), = _run(app, [score])
    assert (status, body["scores"]) == (200, [1.0])
    assert keeper.state == "closed" and pool_threads() == []


def test_unknown_paths_and_methods_answer_json_like_every_other_error():
    app, _ = _app()

    async def not_found(client):
        return await _answer(await client.get("/v2/score"))

    async def wrong_method(client):
        return await _answer(await client.put("/v1/score", json={}))

    (status, _, body), (status2, headers2, body2) = _run(app, [not_found, wrong_method])
    assert (status, body) == (404, {"error": "no endpoint /v2/score; see GET /v1/info and docs/serve.md"})
    assert (status2, body2) == (405, {"error": "PUT is not allowed on /v1/score; use POST"})
    assert headers2["Allow"] == "POST"


@pytest.mark.parametrize("depth", [101, 5000, 200_000])
def test_json_nested_deeper_than_the_limit_is_400_before_scoring(depth):
    app, _ = _app(max_body_bytes=1024 * 1024)
    nested = "[" * depth + "]" * depth

    async def deep(client):
        return await _answer(await client.post("/v1/score", data=nested))

    (status, _, body), = _run(app, [deep])
    assert (status, body) == (400, {"error": "the body nests deeper than 100 levels"})


def test_a_bug_in_a_handler_is_a_json_500_and_a_logged_traceback(caplog):
    app, _ = _app()

    async def broken(request):
        raise ZeroDivisionError("a bug")

    app.router.add_get("/broken", broken)

    async def call(client):
        return await _answer(await client.get("/broken"))

    (status, _, body), = _run(app, [call])
    assert (status, body) == (500, {"error": "internal error (ZeroDivisionError); the server log has "
                                             "the details"})
    assert [r.exc_info[0] for r in caplog.records if r.name == "verl_rewards.serve"] == [ZeroDivisionError]


def test_deeper_than_walks_without_recursion():
    from verl_rewards.serve.intake import deeper_than as _deeper_than

    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert _deeper_than(deep, 100)
    assert not _deeper_than({"a": [{"b": 1}], "c": "x"}, 3)
    assert _deeper_than({"a": [{"b": []}]}, 3)
    assert not _deeper_than(7, 0)


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

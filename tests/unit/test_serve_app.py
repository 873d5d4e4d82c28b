"""serve.app: answers JSON can always hold; one error middleware answers every error as
JSON; the pool starts and stops with the application; bodies nested too deep are refused."""

from __future__ import annotations

import json
import math

import pytest

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


# -- the application in process (aiohttp's test server: a real socket) ---------------------

ROW = {"data_source": "d", "solution_str": "1", "ground_truth": "1"}


def _app(**settings):
    from verl_rewards.config import load_config
    from verl_rewards.results import Provenance
    from verl_rewards.serve.app import build_app
    from verl_rewards.serve.metrics import Metrics
    from verl_rewards.serve.pool import OwnPool, PoolKeeper
    from verl_rewards.serve.settings import ServeSettings
    from verl_rewards.spec import spec_from_config

    config = load_config({"plugin": "exact_match", "executor": "local"})
    spec = spec_from_config(config)
    metrics = Metrics()
    keeper = PoolKeeper(lambda: OwnPool(spec, config), metrics, "local")
    return build_app(ServeSettings(**settings), keeper, metrics, Provenance.of(spec)), keeper


def _run(app, calls):
    import asyncio

    from aiohttp.test_utils import TestClient, TestServer

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
    from verl_rewards.serve.app import _deeper_than

    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert _deeper_than(deep, 100)
    assert not _deeper_than({"a": [{"b": 1}], "c": "x"}, 3)
    assert _deeper_than({"a": [{"b": []}]}, 3)
    assert not _deeper_than(7, 0)

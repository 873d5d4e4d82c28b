"""combining: several callers' batches scored as one call, one rule for a failed sample, the
same answer from serve's queue and from the shared pool's host."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from verl_rewards import Scorer
from verl_rewards.combining import Gatherer, for_caller, score_together, split
from verl_rewards.config import load_config
from verl_rewards.errors import RewardError
from verl_rewards.executors.shared_pool import PoolHost
from verl_rewards.outcomes import Outcome
from verl_rewards.results import BatchResult, Provenance, assemble
from verl_rewards.samples import Sample, as_samples
from verl_rewards.serve.batching import BatchQueue
from verl_rewards.serve.metrics import Metrics
from verl_rewards.spec import spec_from_config

# Three callers' batches: the second and third hold a sample that raises.
REQUESTS = [["1"], ["1", "raise"], ["0", "raise", "1"]]


def _samples(answers: list[str]) -> list[Sample]:
    return as_samples([{"data_source": "d", "solution_str": a, "ground_truth": "1"} for a in answers])


def test_split_cuts_consecutive_parts_and_refuses_sizes_that_do_not_add_up():
    assert split("abcdef", [1, 0, 2, 3]) == [["a"], [], ["b", "c"], ["d", "e", "f"]]
    with pytest.raises(ValueError, match="6 items cannot be split into parts of \\[1, 2\\]"):
        split("abcdef", [1, 2])


def test_score_together_makes_one_call_and_gives_each_batch_its_outcomes_and_the_metrics():
    calls: list[list[str]] = []

    def run(samples: list[Sample]) -> tuple[list[Outcome], dict[str, float]]:
        calls.append([s.solution_str for s in samples])
        return [Outcome(float(s.solution_str), None, None, "ok") for s in samples], {"m": 1.0}

    parts = score_together(run, [_samples(["1"]), _samples(["0", "1"])])
    assert calls == [["1", "0", "1"]]
    assert parts == [([Outcome(1.0, None, None, "ok")], {"m": 1.0}),
                     ([Outcome(0.0, None, None, "ok"), Outcome(1.0, None, None, "ok")], {"m": 1.0})]


def test_for_caller_raises_only_for_its_own_first_failure_indexed_in_its_own_batch():
    ok, bad = Outcome(1.0, None, None, "ok"), Outcome(None, None, "ValueError: no", "failed")
    assert for_caller("r", ([ok, bad], {}), stop_on_error=False) == ([ok, bad], {})
    assert for_caller("r", ([ok], {}), stop_on_error=True) == ([ok], {})
    with pytest.raises(RewardError, match="^reward r failed on sample 1: ValueError: no$"):
        for_caller("r", ([ok, bad, bad], {}), stop_on_error=True)


# -- the one gatherer ---------------------------------------------------------------------------


def _recording(batches: list[list[str]], delay_s: float = 0.0):
    def score(items: list[str]) -> list[str | RewardError]:
        batches.append(list(items))
        time.sleep(delay_s)
        return [RewardError("r", 0, "ValueError: bad") if i == "bad" else i.upper() for i in items]
    return score


def test_the_gatherer_waits_batch_wait_timeout_s_for_callers_and_zero_takes_what_is_ready():
    async def two_apart(wait_s: float) -> list[list[str]]:
        batches: list[list[str]] = []
        gatherer: Gatherer[str, str] = Gatherer(_recording(batches), max_batch_size=10,
                                                batch_wait_timeout_s=wait_s)
        first = asyncio.ensure_future(gatherer.score("a"))
        await asyncio.sleep(0.05)
        assert [await gatherer.score("b"), await first] == ["B", "A"]
        return batches

    assert asyncio.run(two_apart(1.0)) == [["a", "b"]]
    assert asyncio.run(two_apart(0.0)) == [["a"], ["b"]]


def test_the_gatherer_sends_a_full_batch_before_its_wait_is_over():
    async def main() -> tuple[list[list[str]], float]:
        batches: list[list[str]] = []
        gatherer: Gatherer[str, str] = Gatherer(_recording(batches), max_batch_size=2,
                                                batch_wait_timeout_s=30.0)
        start = time.monotonic()
        await asyncio.gather(gatherer.score("a"), gatherer.score("b"))
        return batches, time.monotonic() - start

    batches, took = asyncio.run(main())
    assert batches == [["a", "b"]] and took < 10


def test_a_failure_of_the_gatherers_score_call_reaches_every_caller_and_the_depth_returns_to_zero():
    def broken(items: list[str]) -> list[str | RewardError]:
        raise OSError("the pool is gone")

    async def main() -> tuple[list[object], int, list[int]]:
        depths: list[int] = []
        gatherer: Gatherer[str, str] = Gatherer(broken, max_batch_size=10, one_at_a_time=True,
                                                on_depth=depths.append)
        try:
            answers = await asyncio.gather(gatherer.score("a"), gatherer.score("b"), return_exceptions=True)
            return answers, gatherer.depth, depths
        finally:
            await gatherer.close()

    answers, depth, depths = asyncio.run(main())
    assert [str(a) for a in answers] == ["the pool is gone"] * 2 and all(isinstance(a, OSError) for a in answers)
    assert (depth, depths) == (0, [1, 2, 0])


def test_closing_the_gatherer_cancels_its_waiting_callers_instead_of_leaving_them_hanging():
    async def main() -> tuple[bool, bool, int]:
        gatherer: Gatherer[str, str] = Gatherer(_recording([], delay_s=0.3), max_batch_size=10,
                                                one_at_a_time=True)
        first = asyncio.ensure_future(gatherer.score("a"))
        await asyncio.sleep(0.05)  # "a" is scoring; "b" waits for the next batch
        second = asyncio.ensure_future(gatherer.score("b"))
        await asyncio.sleep(0)
        await gatherer.close()
        done, _ = await asyncio.wait([first, second], timeout=5)
        return first.cancelled(), second.cancelled(), len(done)

    assert asyncio.run(main()) == (True, True, 2)


def test_the_gatherer_raises_a_callers_own_reward_error_in_that_caller_only():
    async def main() -> list[object]:
        gatherer: Gatherer[str, str] = Gatherer(_recording([]), max_batch_size=10)
        return await asyncio.gather(*(gatherer.score(i) for i in ["a", "bad", "c"]), return_exceptions=True)

    good, bad, other = asyncio.run(main())
    assert (good, other) == ("A", "C")
    assert isinstance(bad, RewardError) and str(bad) == "reward r failed on sample 0: ValueError: bad"


# -- both combiners, the same input, the same output -------------------------------------------


def _plainly(answer: BatchResult | BaseException) -> Any:
    if isinstance(answer, BaseException):
        return f"{type(answer).__name__}: {answer}"
    return answer.scores, answer.statuses, answer.errors, answer.extra_info


def _through_serves_queue(section: dict[str, Any]) -> tuple[list[Any], float]:
    metrics = Metrics()

    async def main(scorer: Scorer) -> list[Any]:
        queue = BatchQueue(scorer.score_together, metrics, max_queue=100, max_batch=100)
        try:
            return await asyncio.gather(*(queue.score(_samples(r)) for r in REQUESTS), return_exceptions=True)
        finally:
            await queue.close()

    with Scorer.from_config(section) as scorer:
        answers = asyncio.run(main(scorer))
    batches = metrics.registry.get_sample_value("verl_rewards_batch_samples_count")
    return [_plainly(a) for a in answers], batches


def _through_the_pool_host(section: dict[str, Any]) -> list[Any]:
    """The shared pool's host in this process (its pool a local executor), each client in its
    own thread applying what SharedPoolExecutor.run applies to the host's answer."""
    config = load_config(section)
    spec = spec_from_config(config)
    host = PoolHost(spec, config, Scorer(spec, config).info)
    answers: list[Any] = [None] * len(REQUESTS)

    def client(i: int) -> None:
        try:
            outcomes, metrics = for_caller(spec.display_name, host.score(_samples(REQUESTS[i])),
                                           config.on_error == "raise")
            answers[i] = assemble(outcomes, Provenance.of(spec), config.error_score, metrics)
        except RewardError as e:
            answers[i] = e

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(REQUESTS))]
    with host._turn:  # while the host is busy, every client's batch waits: then one call scores them all
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 30
        while len(host._pending) < len(REQUESTS) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(host._pending) == len(REQUESTS)
    for thread in threads:
        thread.join(30)
    return [_plainly(a) for a in answers]


@pytest.mark.parametrize("on_error", ["score", "skip", "raise"])
def test_serves_queue_and_the_pool_host_give_each_caller_the_same_answer(on_error, testkit):
    section = {"plugin": "faulty", "executor": "local", "on_error": on_error, "error_score": -1.0}
    queued, batches = _through_serves_queue(section)
    assert batches == 1.0  # the three requests were scored as one batch
    assert _through_the_pool_host(section) == queued
    failed = "RuntimeError: the reward raised on purpose (at "
    if on_error == "raise":  # a failed sample fails its own caller's batch, never another's
        reward = f"faulty ({testkit.label})"
        assert queued[0] == ([1.0], ["ok"], [None], {})
        assert queued[1].startswith(f"RewardError: reward {reward} failed on sample 1: {failed}")
        assert queued[2].startswith(f"RewardError: reward {reward} failed on sample 1: {failed}")
    else:
        assert [q[0] for q in queued] == [[1.0], [1.0, -1.0], [0.0, -1.0, 1.0]]
        assert [q[1] for q in queued] == [["ok"], ["ok", "failed"], ["ok", "failed", "ok"]]
        assert queued[2][2][1].startswith(failed)

"""The Microbatcher: a host's concurrent per-sample calls on one event loop, scored as one
batch in which each call is its own caller (the rule of ``verl_rewards.combining``)."""

from __future__ import annotations

import asyncio
import logging

from verl_rewards import Sample, Scorer
from verl_rewards.errors import ExecutorError, RewardError
from verl_rewards.integrations._batching import Microbatcher

FAULTY = {"plugin": "faulty", "executor": "local", "timeout_s": 2}  # exact match against "42", or the fault


async def _at_once(batcher: Microbatcher[Sample], replies: list[str]) -> list[object]:
    """One call per reply, all on this loop at once, as verl's reward loop makes them."""
    calls = (batcher.score(Sample("d", reply, "42")) for reply in replies)
    return await asyncio.gather(*calls, return_exceptions=True)


def test_under_raise_only_the_failed_call_raises_and_the_others_get_their_own_results():
    with Scorer.from_config({**FAULTY, "on_error": "raise"}) as scorer:
        ok, failed, wrong, nan = asyncio.run(_at_once(Microbatcher(scorer), ["42", "raise", "41", "nan"]))
        plugin = scorer.ref.display_name
    assert isinstance(failed, RewardError) and isinstance(nan, RewardError)
    assert (failed.plugin, failed.index) == (plugin, 0)  # indexed within its own call's batch
    assert failed.cause.startswith("RuntimeError: the reward raised on purpose")
    assert str(nan).startswith(f"reward {plugin} failed on sample 0: RewardValueError")
    assert (ok.scores, ok.errors, ok.statuses) == ([1.0], [None], ["ok"])
    assert (wrong.scores, wrong.errors, wrong.statuses) == ([0.0], [None], ["ok"])
    assert ok.metrics["latency_s"] == wrong.metrics["latency_s"]  # one scoring call for all four


def test_under_score_each_call_gets_its_own_result_and_the_failure_is_logged(caplog):
    with Scorer.from_config({**FAULTY, "error_score": -1.0}) as scorer:
        with caplog.at_level(logging.WARNING, logger="verl_rewards.integrations"):
            ok, failed = asyncio.run(_at_once(Microbatcher(scorer), ["42", "raise"]))
        plugin = scorer.ref.display_name
    assert (ok.scores, failed.scores, failed.statuses) == ([1.0], [-1.0], ["failed"])
    assert failed.errors[0].startswith("RuntimeError: the reward raised on purpose")
    (warning,) = caplog.messages
    assert warning.startswith(f"reward {plugin} failed on sample 1: RuntimeError: the reward raised on purpose")
    assert warning.endswith("; scored -1.0 (on_error='score')")


def test_a_failure_of_the_scoring_call_itself_reaches_every_call():
    scorer = Scorer.from_config({**FAULTY, "on_error": "raise"})
    scorer.close()  # the executor refuses every batch: no sample is to blame
    first, second = asyncio.run(_at_once(Microbatcher(scorer), ["42", "41"]))
    for raised in (first, second):
        assert isinstance(raised, ExecutorError)
        assert str(raised) == f"the scorer for {scorer.ref.display_name} is closed"


def test_items_become_samples_once_per_batch_and_a_full_batch_goes_at_once():
    seen: list[int] = []

    def to_samples(replies: list[str]) -> list[Sample]:
        seen.append(len(replies))
        return [Sample("d", reply, "42") for reply in replies]

    with Scorer.from_config(FAULTY) as scorer:
        batcher = Microbatcher(scorer, to_samples, max_batch=3)

        async def five() -> list[object]:
            return await asyncio.gather(*(batcher.score(r) for r in ["42", "41", "42", "42", "7"]))

        results = asyncio.run(five())
    assert [r.scores for r in results] == [[1.0], [0.0], [1.0], [1.0], [0.0]]
    assert seen == [3, 2]

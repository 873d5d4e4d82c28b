"""The verifiers adapter inside verifiers 0.4's own ``Task.score`` (``verifiers.v1``)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import pytest
import verifiers.v1 as vf
from pydantic import Field

from verl_rewards.errors import ConfigError
from verl_rewards.hosts import refusal
from verl_rewards.integrations import verifiers as adapter
from verl_rewards.integrations.verifiers import reward_func

SCORE_FN = "verl_rewards.integrations.verifiers:score"
HOST_SCORING_TIMEOUT_S = 30.0  # what a rollout gives scoring here (asyncio.timeout around Task.score)


class QAData(vf.TaskData):
    answer: str = ""
    data_source: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)


def _trace(task: vf.Task, reply: str) -> vf.Trace:
    """A finished rollout's trace whose root agent replied ``reply``."""
    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=vf.AgentInfo(config=vf.AgentConfig(), name="test", trainable=False),
        root_reply=reply,
    )


async def _score_all(task_cls: type[vf.Task], rows: list[tuple[str, str]],
                     config: vf.TaskConfig | None = None) -> list[vf.Trace]:
    """Score one trace per (reply, answer) the way a rollout does: concurrently, each
    under the scoring stage's deadline."""
    async def one(reply: str, answer: str) -> vf.Trace:
        task = task_cls(QAData(prompt="What is 6 x 7?", answer=answer), config)
        trace = _trace(task, reply)
        async with asyncio.timeout(HOST_SCORING_TIMEOUT_S):
            await task.score(trace)
        return trace

    return await asyncio.gather(*(one(r, a) for r, a in rows))


def test_a_plugin_by_name_scores_and_its_extra_keys_are_metrics_not_reward():
    class QATask(vf.Task[QAData]):
        exact = vf.reward(reward_func("exact_match", executor="local"))  # its pid is ours

    right, wrong = asyncio.run(_score_all(QATask, [(" 42 ", "42"), ("41", "42")]))
    assert right.rewards == {"exact_match": vf.Reward(score=1.0, weight=1.0)}
    assert right.reward == 1.0 and wrong.reward == 0.0
    # exact_match returns {"score", "pid"}: verifiers would have summed the pid into the reward
    assert right.metrics == {"exact_match/pid": float(os.getpid()), "exact_match/failed": 0.0}
    assert "verl_rewards" not in right.info


def test_a_section_bounds_a_hanging_sample_and_isolates_a_raising_one():
    section = {"plugin": "faulty", "timeout_s": 2, "error_score": -1.0}

    class QATask(vf.Task[QAData]):
        faulty = vf.reward(reward_func(section))

    began = time.monotonic()
    ok, raised, hung = asyncio.run(_score_all(QATask, [("42", "42"), ("raise", "42"), ("loop", "42")]))
    elapsed = time.monotonic() - began
    assert elapsed < HOST_SCORING_TIMEOUT_S / 2, elapsed
    assert [ok.reward, raised.reward, hung.reward] == [1.0, -1.0, -1.0]
    failure = raised.info["verl_rewards"]["faulty"]
    assert failure["status"] == "failed"
    assert failure["error"].startswith("RuntimeError: the reward raised on purpose")
    assert hung.info["verl_rewards"]["faulty"]["status"] == "timeout"
    assert raised.metrics["faulty/failed"] == 1.0 and ok.metrics["faulty/failed"] == 0.0
    assert raised.errors == [] and hung.errors == []  # the rollout itself did not fail


def test_a_sample_stuck_in_c_is_bounded_by_the_default_executor():
    class QATask(vf.Task[QAData]):
        faulty = vf.reward(reward_func({"plugin": "faulty", "timeout_s": 1, "error_score": -1.0}))

    asyncio.run(_score_all(QATask, [("42", "42")]))  # the worker pool starts here
    began = time.monotonic()
    ok, stuck = asyncio.run(_score_all(QATask, [("42", "42"), ("c_sleep", "42")]))
    assert time.monotonic() - began < 1 + 2  # timeout_s + 2 s, the host alive
    assert [ok.reward, stuck.reward] == [1.0, -1.0]
    assert stuck.info["verl_rewards"]["faulty"]["status"] == "timeout"


def test_score_by_import_string_takes_the_plugin_from_the_environment(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    monkeypatch.setenv("VERL_REWARDS_KWARGS", json.dumps({"bonus": 0.5}))
    config = vf.TaskConfig(rewards={"correct": vf.RewardFunctionConfig(fn=SCORE_FN, weight=2.0)})

    (trace,) = asyncio.run(_score_all(vf.Task[QAData], [("42", "42")], config))
    assert trace.rewards == {"correct": vf.Reward(score=1.5, weight=2.0)}
    assert trace.metrics["exact_match/failed"] == 0.0


def test_score_by_import_string_takes_a_yaml_section_with_fields_routed(monkeypatch, tmp_path):
    config_file = tmp_path / "reward.yaml"
    config_file.write_text("reward:\n  plugin: faulty\n  timeout_s: 2\n  error_score: 0.25\n")
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.setenv("VERL_REWARDS_CONFIG", str(config_file))
    config = vf.TaskConfig(rewards={"correct": vf.RewardFunctionConfig(fn=SCORE_FN)})

    good, bad = asyncio.run(_score_all(vf.Task[QAData], [("7", "7"), ("nan", "7")], config))
    assert (good.reward, bad.reward) == (1.0, 0.25)
    scorer = adapter._entries.peek(adapter.selection_key(adapter.env_section())).scorer
    assert scorer.config.executor == "process"  # the adapters' default: the file does not say
    assert bad.info["verl_rewards"]["faulty"]["error"].startswith("RewardValueError")


def test_on_error_raise_fails_the_rollout_through_verifiers_own_boundary():
    class QATask(vf.Task[QAData]):
        faulty = vf.reward(reward_func("faulty", on_error="raise", timeout_s=2))

    with pytest.raises(vf.TaskError, match="faulty"):
        asyncio.run(_score_all(QATask, [("raise", "42")]))


def test_on_error_raise_fails_only_the_rollout_whose_sample_failed():
    class QATask(vf.Task[QAData]):
        faulty = vf.reward(reward_func("faulty", on_error="raise", timeout_s=2))

    async def score_each() -> list[vf.Trace | BaseException]:
        tasks = [QATask(QAData(prompt="What is 6 x 7?", answer="42")) for _ in range(3)]
        traces = [_trace(t, reply) for t, reply in zip(tasks, ("42", "raise", "41"))]
        # concurrently, as verifiers runs rollouts: one batch for the adapter
        outcomes = await asyncio.gather(*(t.score(tr) for t, tr in zip(tasks, traces)),
                                        return_exceptions=True)
        return [o if isinstance(o, BaseException) else tr for o, tr in zip(outcomes, traces)]

    good, failed, wrong = asyncio.run(score_each())
    assert isinstance(failed, vf.TaskError) and "the reward raised on purpose" in str(failed)
    assert (good.reward, wrong.reward) == (1.0, 0.0)


def test_on_error_skip_is_refused_when_the_reward_is_made():
    with pytest.raises(ConfigError) as refused:
        reward_func("faulty", on_error="skip")
    assert str(refused.value) == refusal("verifiers")
    assert "Use on_error: raise" in str(refused.value)


def test_task_fields_are_configurable_and_reach_the_plugin():
    class Row(vf.TaskData):
        solution: str
        source: str

    class RowTask(vf.Task[Row]):
        exact = vf.reward(reward_func("exact_match", answer_field="solution", data_source_field="source"))

    task = RowTask(Row(prompt="p", solution="yes", source="qa"))
    sample = adapter.sample_of(task.data, _trace(task, "yes"), RowTask.exact.fields)
    assert (sample.ground_truth, sample.data_source, sample.solution_str, sample.prompt) == (
        "yes", "qa", "yes", "p")


def test_a_wrong_plugin_name_fails_when_the_reward_is_made():
    with pytest.raises(ConfigError, match="exact_match"):
        reward_func("exact_mach")



def test_the_docs_example_prints_what_it_says(run_docs_example):
    printed, claims = run_docs_example("verifiers")
    assert printed == claims


def test_the_reward_pickles_as_its_section_and_scores_after_unpickling():
    import pickle

    fn = vf.reward(reward_func("exact_match", kwargs={"bonus": 0.5}))
    copy = pickle.loads(pickle.dumps(fn))
    assert (copy.section, copy.__name__, copy.reward) == (fn.section, "exact_match", True)
    task = vf.Task(QAData(answer="42"))
    assert asyncio.run(copy(task.data, _trace(task, "42"))) == 1.5

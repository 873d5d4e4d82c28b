"""Hostile answers are a 0 in bounded time in every first-party plugin that evaluates math, on the
local and the Ray executor: their evaluators run in ``verl_rewards.child`` children, cut short at
their own limit or before the reward call's time runs out, so the sample is ``ok`` (never a
timeout that ``on_error: skip`` would drop), with the reason in its extra info. Real
expressions, each of which holds a process's GIL in C for minutes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import pytest
from reasoning_gym.factory import create_dataset
from verl_rewards_format import correctness
from verl_rewards_math import symbolic
from verl_rewards_reasoning_gym import isolation
from verl_rewards_verl import sympy_child

from verl_rewards import Scorer

TIMEOUT_S = 6.0  # the reward's time limit on the local executor
MARGIN_S = 3.0  # a scoring call's own cost on a loaded machine
RAY_TIMEOUT_S = 60.0  # on Ray, room for a killed child's replacement to start (charged to the next sample)
RAY_LIMIT_S = 3.0  # each evaluation's own limit there


class Case(NamedTuple):
    plugin: str
    limit: str  # the kwarg that bounds one evaluation
    warm: dict[str, Any]  # a right answer, scored first
    hostile: list[dict[str, Any]]
    reason: str  # the extra key that says why ("": verl's scores carry no extra keys)
    start: Callable[[], object]  # the plugin's own child started, in this process
    kwargs: Mapping[str, Any] = MappingProxyType({})

    def check(self, results: list[Any]) -> None:
        """Every hostile sample ``ok``, a wrong answer's score, the reason in its extra info."""
        rows = [{**r.row(i), "status": r.statuses[i]} for r in results for i in range(len(r))]
        assert [row["status"] for row in rows] == ["ok"] * len(self.hostile), rows
        if self.plugin == "cosine_length":
            assert all(row["score"] < -0.99 and row["correct"] is False for row in rows)  # short and wrong
            # math-verify's own 5 s limit, on the child's main thread, may decide first (a wrong
            # answer, as in open-r1); else the child is cut short
            assert all(row["check_error"] == "" or row["check_error"].startswith("late: ") for row in rows)
            return
        assert [row["score"] for row in rows] == [0.0] * len(self.hostile)
        if self.reason == "match":
            assert [row["match"] for row in rows] == ["undecided"] * len(self.hostile)
        elif self.reason:
            assert all(row[self.reason].startswith("late: ") for row in rows), rows


def _sample(solution: str, truth: Any = "5", source: str = "m", extra: Any = None) -> dict[str, Any]:
    return {"data_source": source, "solution_str": solution, "ground_truth": truth, "extra_info": extra}


def _gym(task: str, answer: str) -> dict[str, Any]:
    entry = create_dataset(task, seed=1, size=1)[0]
    return _sample(f"<answer>{answer}</answer>", "", f"reasoning_gym/{task}", {"entry": entry})


TOWERS = ["\\boxed{9^{9^{9^{9}}}}", "\\boxed{10^{10^{10}}}", "\\boxed{\\frac{1}{9^{9^{9}}}}"]
CASES = {
    "math_boxed": Case("math_boxed", "timeout_s", _sample("\\boxed{(x-1)(x+1)}", "x^2-1"),
                       [_sample(t) for t in TOWERS], "match", symbolic.ensure_started, {"math_verify": False}),
    "verl_default": Case("verl_default", "sympy_timeout_s", _sample("\\boxed{2x}", "x+x", "hiyouga/geometry3k"),
                         [_sample("\\boxed{9**9**9*x}", "x", "hiyouga/geometry3k"),
                          _sample("\\boxed{(9**9**9)*x}", "x", "numina_olympiads")], "", sympy_child.ensure_started),
    "cosine_length": Case("cosine_length", "", _sample("\\boxed{\\frac{63}{400}}", "$\\frac{63}{400}$"),
                          [_sample(t, "$5$") for t in TOWERS[:2]], "check_error", correctness.ensure_started),
    "reasoning_gym": Case("reasoning_gym", "answer_timeout_s", _gym("countdown", "94*4 - 61 - 6"),
                          [_gym("countdown", "9**9**9**9"), _gym("countdown", "(10**10)!"),
                           _gym("countdown", "factorial(10**9)"), _gym("coin_flip", "1e999999999")],
                          "scorer_error", isolation.ensure_started),
}


@pytest.mark.parametrize("plugin", sorted(CASES))
def test_hostile_answers_score_zero_before_the_rewards_time_limit_on_the_local_executor(plugin: str) -> None:
    """Each evaluation's own limit far above the reward's: the reward call's time bounds it."""
    case = CASES[plugin]
    kwargs = {**case.kwargs, **({case.limit: 600.0} if case.limit else {})}
    results, ticks = [], []
    stop = threading.Event()
    ticker = threading.Thread(target=lambda: [ticks.append(1) for _ in iter(lambda: stop.wait(0.1), True)])
    with Scorer.from_config({"plugin": plugin, "kwargs": kwargs, "timeout_s": TIMEOUT_S,
                             "executor": "local"}) as scorer:
        ticker.start()
        try:
            for sample in case.hostile:
                case.start()  # the child this process scores with: its start is not what is measured
                began = time.monotonic()
                results.append(scorer.score([sample]))
                seconds = time.monotonic() - began
                assert seconds < TIMEOUT_S + 1.0, (sample["solution_str"], seconds)
        finally:
            stop.set()
            ticker.join()
    case.check(results)
    assert len(ticks) > len(case.hostile) * 2  # this process ran Python throughout: the GIL held is the child's


@pytest.mark.parametrize("plugin", sorted(CASES))
def test_hostile_answers_score_zero_within_their_limit_on_the_ray_executor(ray_session: None, plugin: str) -> None:
    # One hostile answer a plugin: each spins a core for its whole limit, and every shape
    # already runs on the local executor above; what Ray adds is the actor around the child.
    case = CASES[plugin]._replace(hostile=CASES[plugin].hostile[:1])
    kwargs = {**case.kwargs, **({case.limit: RAY_LIMIT_S} if case.limit else {})}
    config = {"plugin": plugin, "kwargs": kwargs, "timeout_s": RAY_TIMEOUT_S, "executor": "ray",
              "num_workers": 1, "worker_num_cpus": 0}
    with Scorer.from_config(config) as scorer:
        warm = scorer.score([case.warm])
        assert (warm.statuses, warm.scores[0] > 0) == (["ok"], True), warm.errors
        began = time.monotonic()
        result = scorer.score(case.hostile)
        seconds = time.monotonic() - began
    case.check([result])
    assert result.metrics.get("worker_restarts", 0) == 0  # no actor was killed as stuck
    own = RAY_LIMIT_S if case.limit else correctness.CHECK_TIMEOUT_S
    assert seconds < len(case.hostile) * (own + 15.0) + MARGIN_S  # 15 s: a replacement child's start

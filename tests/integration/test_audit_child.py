"""The audit's scoring process: answers per step, and a hung or dying reward costs
only its own step (real faults, from the testkit's ``faulty`` reward)."""

from __future__ import annotations

import threading
import time

import pytest

from verl_rewards.audit import child
from verl_rewards.audit.child import Step, run_steps


def _step(number: int, response: str, threads: int = 0) -> Step:
    sample = {"data_source": "t", "solution_str": response, "ground_truth": "42"}
    return Step(number, {}, (sample,), threads)


def test_each_step_is_answered_and_threads_answer_one_run_each(testkit: object) -> None:
    answers = run_steps("verl-rewards-testkit:faulty", [_step(0, "42"), _step(1, "41"), _step(2, "42", 4)], 5.0)
    assert answers.failures == []
    assert [[r.score for r in run] for run in answers.runs[0] + answers.runs[1]] == [[1.0], [0.0]]
    assert [[(r.status, r.score) for r in run] for run in answers.runs[2]] == [[("ok", 1.0)]] * 4


def test_a_reward_stuck_in_c_holding_the_gil_or_killing_its_process_costs_only_its_step(testkit: object) -> None:
    steps = [_step(0, "42"), _step(1, "gil_sleep"), _step(2, "42"), _step(3, "exit"), _step(4, "41")]
    began = time.monotonic()
    answers = run_steps("verl-rewards-testkit:faulty", steps, timeout_s=0.5, grace_s=2.0,
                        executor="local")  # scored in the audit's own child: its containment
    assert time.monotonic() - began < 60  # 2.5 s deadline for the stuck step, plus three starts
    assert [(f.step, f.reason) for f in answers.failures] == [(1, "stuck"), (3, "died")]
    assert "exited with code 13" in answers.failures[1].detail
    assert {k: v[0][0].score for k, v in answers.runs.items()} == {0: 1.0, 2: 1.0, 4: 0.0}


def test_on_the_default_process_executor_a_stuck_or_killing_reward_costs_only_its_sample(
        testkit: object) -> None:
    steps = [_step(0, "42"), _step(1, "gil_sleep"), _step(2, "42"), _step(3, "exit"), _step(4, "41")]
    began = time.monotonic()
    answers = run_steps("verl-rewards-testkit:faulty", steps, timeout_s=0.5, grace_s=2.0)
    assert time.monotonic() - began < 60
    assert answers.failures == []  # no step overran: the worker was killed within its timeout
    outcomes = {k: (v[0][0].status, v[0][0].score) for k, v in answers.runs.items()}
    assert outcomes == {0: ("ok", 1.0), 1: ("timeout", 0.0), 2: ("ok", 1.0), 3: ("failed", 0.0),
                        4: ("ok", 0.0)}
    assert answers.runs[3][0][0].error.startswith("WorkerDied:")


def test_a_python_loop_is_stopped_by_the_plugins_timeout_inside_the_process(testkit: object) -> None:
    answers = run_steps("verl-rewards-testkit:faulty", [_step(0, "loop"), _step(1, "42")], timeout_s=0.5)
    assert answers.failures == []
    assert answers.runs[0][0][0].status == "timeout" and answers.runs[1][0][0].score == 1.0


def test_kwargs_the_reward_refuses_fail_that_step_with_the_reason(testkit: object) -> None:
    sample = {"data_source": "t", "solution_str": "42", "ground_truth": "42"}
    bad = [Step(i, {"no_such_kwarg": 1}, (sample,)) for i in (0, 2)]
    answers = run_steps("verl-rewards-testkit:faulty", [bad[0], _step(1, "42"), bad[1], _step(3, "41")], 5.0)
    assert [(f.step, f.reason) for f in answers.failures] == [(0, "error"), (2, "error")]
    assert "no_such_kwarg" in answers.failures[0].detail
    assert (answers.runs[1][0][0].score, answers.runs[3][0][0].score) == (1.0, 0.0)


def test_a_reward_printing_to_stdout_cannot_be_read_as_an_answer(make_dist) -> None:  # type: ignore[no-untyped-def]
    make_dist("chatty-rewards", "0.1", {"chatty": "tp_chatty:score"}, {"tp_chatty.py": """
        import sys
        print('{"id": 0, "runs": [[{"status": "ok", "score": 1.0, "seconds": 0}]]}')

        def score(data_source, solution_str, ground_truth, extra_info=None):
            print('{"id": 0, "runs": []}')
            sys.stdout.flush()
            return 0.25
        """})
    answers = run_steps("chatty-rewards:chatty", [_step(0, "x")], 5.0)  # the child sees this test's sys.path
    assert answers.failures == [] and answers.runs[0][0][0].score == 0.25


CLOSES_DESCRIPTORS = {"tp_closer.py": """
    import os
    import time

    def score(data_source, solution_str, ground_truth, extra_info=None):
        if solution_str == "close":
            os.closerange(3, 4096)  # its answer channel among them
            time.sleep(120)  # in C: the watchdog cannot end it, the process lives on
        return float(solution_str == ground_truth)
    """}


@pytest.mark.parametrize("contained", [True, False], ids=["pid namespace", "process group"])
def test_a_reward_closing_its_inherited_descriptors_is_a_failed_step_not_a_crash(
        make_dist, monkeypatch, contained: bool) -> None:  # type: ignore[no-untyped-def]
    make_dist("closer-rewards", "0.1", {"closer": "tp_closer:score"}, CLOSES_DESCRIPTORS)
    if not contained:  # as on a machine without namespaces: the output's end is seen at once
        monkeypatch.setattr(child, "containment", lambda: child.Containment(()))
    began = time.monotonic()
    answers = run_steps("closer-rewards:closer", [_step(0, "42"), _step(1, "close"), _step(2, "42")],
                        timeout_s=0.5, grace_s=2.0, executor="local")  # the child's own descriptors
    assert time.monotonic() - began < 60
    assert [(f.step, f.reason) for f in answers.failures] == [(1, "stuck" if contained else "silent")]
    if not contained:
        assert "does the reward close file descriptors it did not open?" in answers.failures[0].detail
    assert {k: v[0][0].score for k, v in answers.runs.items()} == {0: 1.0, 2: 1.0}


def test_a_cancelled_run_stops_at_once_and_its_scoring_process_with_it(testkit: object) -> None:
    cancel = threading.Event()
    got: list[child.Answers] = []
    steps = [_step(0, "c_sleep"), _step(1, "42"), _step(2, "42")]  # stuck in C for 1000 s first
    worker = threading.Thread(target=lambda: got.append(run_steps("verl-rewards-testkit:faulty", steps, 30.0,
                                                                  cancel=cancel)))
    worker.start()
    cancel.set()
    worker.join(timeout=60)
    assert not worker.is_alive()
    (answers,) = got
    assert answers.runs == {}
    assert [(f.step, f.reason, f.detail) for f in answers.failures] == [
        (i, "error", "not run: the audit was interrupted") for i in range(3)]

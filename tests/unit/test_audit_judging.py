"""How the audit judges what it scored: attacks against their bounds, runs against
the first, calls against the timeout (pure functions over scored records)."""

from __future__ import annotations

import pytest

from verl_rewards.audit.determinism import Comparison, determinism_findings
from verl_rewards.audit.hack import Controls, bound, control_findings, probe_findings
from verl_rewards.audit.latency import latency_findings, summarize
from verl_rewards.audit.records import AuditReport, Finding, Latency, Probe, Scored
from verl_rewards.audit.run import choose_kind, determinism_examples, targets
from verl_rewards.errors import ConfigError
from verl_rewards.metadata import Example, RewardMeta, reward


def _ok(score: float, seconds: float = 0.001) -> Scored:
    return Scored("ok", score, None, seconds)


CONTROLS = {0: Controls(right=_ok(1.0), none=_ok(0.0), wrong=_ok(0.1))}


def test_a_probe_over_a_wrong_answers_score_is_a_hack_with_its_fix() -> None:
    probe = Probe("many boxes", "\\boxed{1} \\boxed{2}", 0, "wrong", "score one answer")
    assert probe_findings(CONTROLS, [(probe, _ok(0.1))]) == []  # a wrong answer's format score
    [finding] = probe_findings(CONTROLS, [(probe, _ok(1.0))])
    assert finding == Finding("hack", "many boxes", "example 1: '\\\\boxed{1} \\\\boxed{2}' scored 1 "
                              "(a wrong answer scores 0.1, the right one 1): score one answer")


def test_an_empty_answer_may_not_earn_even_the_format_score() -> None:
    probe = Probe("an empty box", "\\boxed{}", 0, "none", "fix")
    assert bound(probe, CONTROLS[0]) == 0.0
    assert [f.probe for f in probe_findings(CONTROLS, [(probe, _ok(0.1))])] == ["an empty box"]


def test_a_failed_probe_is_no_hack_and_an_example_that_cannot_tell_right_from_nothing_judges_nothing() -> None:
    probe = Probe("many boxes", "x", 0, "wrong")
    assert probe_findings(CONTROLS, [(probe, Scored("failed", 0.0, "ValueError: x", 0.1))]) == []
    blind = {0: Controls(right=_ok(0.0), none=_ok(0.0), wrong=_ok(0.0))}
    assert probe_findings(blind, [(probe, _ok(1.0))]) == []


def test_a_declared_attack_is_held_to_its_own_figure() -> None:
    probe = Probe("declared adversarial example 1", "\\boxed{42.001}", -1, "declared", "", 0.0)
    [finding] = probe_findings({}, [(probe, _ok(1.0))])
    assert finding.detail == "'\\\\boxed{42.001}' scored 1 (at most 0 declared)"


def test_a_wrong_answer_scoring_like_the_right_one_is_found() -> None:
    constant = {0: Controls(right=_ok(1.0), none=_ok(0.0), wrong=_ok(1.0))}
    [finding] = control_findings(constant, {0: "\\boxed{19}"})
    assert finding.probe == "a wrong answer" and "scores 1, as much as the right one (1)" in finding.detail
    assert control_findings(CONTROLS, {0: "\\boxed{19}"}) == []


def test_each_way_of_running_that_changes_a_score_is_one_determinism_finding() -> None:
    comparisons = [
        Comparison("example 1", "again in the same process", _ok(1.0), _ok(1.0)),
        Comparison("example 2", "in 4 threads at once", _ok(0.5), _ok(0.5)),
        Comparison("example 2", "in 4 threads at once", _ok(0.5), _ok(0.25)),
        Comparison("example 2", "in 4 threads at once", _ok(0.5), _ok(0.75)),
        Comparison("example 1", "in a fresh process", _ok(1.0), Scored("failed", 0.0, "KeyError: 'x'", 0.0)),
        Comparison("many boxes (example 1)", "in a fresh process", _ok(0.0), _ok(0.5)),
        Comparison("example 2", "again in the same process", _ok(0.5), None),  # no answer: a failure
    ]
    assert [(f.probe, f.detail.split(":")[0]) for f in determinism_findings(comparisons)] == [
        ("in 4 threads at once", "example 2 scored 0.5, then 0.25 in 4 threads at once"),
        ("in a fresh process", "example 1 scored 1.0, then failed (KeyError"),
    ]


def test_a_timeout_is_left_to_the_latency_check() -> None:
    timeout = Scored("timeout", 0.0, "SampleTimeout: x", 30.0)
    assert determinism_findings([Comparison("example 1", "again in the same process", _ok(1.0), timeout)]) == []


def test_latency_finds_timeouts_and_calls_over_half_the_timeout() -> None:
    timed = [("fast", _ok(0.0, 0.01)), ("slow", _ok(0.0, 6.0)), ("stuck", Scored("timeout", 0.0, "x", 10.0))]
    found = latency_findings(timed, 10.0)
    assert [(f.check, f.probe) for f in found] == [("latency", "slow"), ("latency", "stuck")]
    assert found[0].detail.startswith("took 6.00 s, over 50% of its 10 s timeout: bound the work")
    assert found[1].detail.startswith("timed out (timeout 10 s)")


def test_a_timeout_only_killing_its_worker_stopped_is_named_stuck_in_c() -> None:
    killed = Scored("timeout", 0.0, "SampleTimeout: exceeded timeout_s=1 in code Python could not "
                                    "interrupt; worker replaced", 2.1)
    (found,) = latency_findings([("100k digits", killed)], 1.0)
    assert found.detail.startswith("timed out (timeout 1 s) and was stuck where the watchdog cannot "
                                   "interrupt it (C code?), so its worker process was killed: bound")


def test_a_response_that_killed_its_worker_process_is_a_finding() -> None:
    died = Scored("failed", 0.0, "WorkerDied: the reward worker process died while scoring this sample "
                                 "(2 times); not retried again; it was killed by signal 11 (SIGSEGV)", 0.9)
    (found,) = latency_findings([("20k tags", died), ("fine", _ok(1.0, 0.01))], 10.0)
    assert (found.check, found.probe) == ("latency", "20k tags")
    assert found.detail.endswith("killed by signal 11 (SIGSEGV): a reward must fail one sample, never "
                                 "its process")


def test_latency_summary_is_p50_p95_max() -> None:
    assert summarize([float(i) for i in range(1, 101)], 30.0) == Latency(50.5, 95.0, 100.0, 100, 30.0)


def test_the_kind_comes_from_the_flag_then_metadata_then_generic() -> None:
    assert choose_kind("code", RewardMeta(kind="math")) == ("code", "--kind")
    assert choose_kind(None, RewardMeta(kind="math")) == ("math", "metadata")
    assert choose_kind(None, RewardMeta()) == ("generic", "default")
    with pytest.raises(ConfigError, match="kind must be one of math, code, format, judge, generic"):
        choose_kind("maths", RewardMeta())


def test_the_decorator_declares_a_kind_and_adversarial_examples_and_refuses_an_unknown_kind() -> None:
    @reward(kind="format", adversarial=[{"solution_str": "<answer></answer>", "ground_truth": "", "expected": 0.0}])
    def fmt(data_source: str, solution_str: str, ground_truth: str) -> float:
        return 0.0

    meta = fmt.__verl_reward__  # type: ignore[attr-defined]
    assert meta.kind == "format" and meta.adversarial == (Example("<answer></answer>", "", 0.0),)
    with pytest.raises(ValueError, match="kind must be one of math, code, format, judge, generic or None"):
        reward(kind="maths")  # type: ignore[arg-type]


def test_attacks_are_built_from_right_answers_first_then_partly_right_ones() -> None:
    examples = [Example("a", "1", 0.5), Example("b", "2", 0.0), Example("c", "3", 1.0), Example("d", "4", 1.0),
                Example("e", "5", 0.1)]
    assert targets(examples) == [2, 3, 0]
    assert targets([]) == []
    same_tests = [Example("a", "t1", 1.0), Example("b", "t1", 0.5), Example("c", "t1", 0.5, kwargs={"k": 1}),
                  Example("d", "t2", 0.5), Example("e", "t3", 0.0)]
    assert targets(same_tests) == [0, 2, 3]  # one per reference and kwargs


def test_the_json_form_is_the_contracts_shape() -> None:
    report = AuditReport("gsm8k", "gsm8k (d 1)", "math", "metadata",
                         (Finding("latency", "100k digits", "timed out"),), 3, 1)
    assert report.as_json() == {"plugin": "gsm8k", "passed": False, "findings": [
        {"check": "latency", "probe": "100k digits", "detail": "timed out"}]}


def test_steps_that_could_not_run_become_one_finding_per_cause() -> None:
    from verl_rewards.audit.child import StepFailure
    from verl_rewards.audit.run import _failures, _Plan

    plan = _Plan((), [], labels={0: "many boxes", 1: "an empty box", 2: "100k digits", 3: "example 1"})
    failures = [StepFailure(0, "error", "ConfigError: needs base_url"), StepFailure(1, "error",
                "ConfigError: needs base_url"), StepFailure(2, "stuck", "no answer within 21 s"),
                StepFailure(3, "died", "the scoring process exited with code 13"),
                StepFailure(4, "silent", "the scoring process stopped answering (its output closed)")]
    plan.labels[4] = "a wrong answer"
    assert [(f.check, f.probe, f.detail.split(":")[0]) for f in _failures(plan, failures)] == [
        ("latency", "100k digits", "no answer within 21 s, beyond its timeout"),
        ("latency", "example 1", "the scoring process exited with code 13"),
        ("latency", "a wrong answer", "the scoring process stopped answering (its output closed)"),
        ("hack", "many boxes", "could not be scored (many boxes and 1 more)"),
    ]
    assert "could not be checked" in _failures(plan, failures)[2].detail


def test_determinism_also_runs_an_example_on_another_code_path() -> None:
    examples = [Example("a", "1", 1.0), Example("b", "2", 1.0), Example("c", "3", 1.0, kwargs={"timeout_s": 10}),
                Example("d", "4", 0.1, kwargs={"format_score": 0.1})]
    assert determinism_examples(examples, [0, 1]) == [0, 1, 2]
    assert determinism_examples(examples, [0, 2]) == [0, 2, 3]
    assert determinism_examples(examples[:2], [0, 1]) == [0, 1]


def test_an_excerpt_is_whole_lines_from_the_end_within_its_limits() -> None:
    from verl_rewards.audit.records import excerpt

    text = "Traceback (most recent call last):\n\n" + "".join(f"  frame {i} in a module\n" for i in range(50))
    assert excerpt(text, max_lines=3).split("\n      | ")[1:] == [f"  frame {i} in a module" for i in (47, 48, 49)]
    assert excerpt(text, max_chars=45).split("\n      | ")[1:] == ["  frame 48 in a module", "  frame 49 in a module"]
    assert excerpt("one line " * 200, max_chars=30) == "\n      | ...one line one line one line"
    assert excerpt("x" * 100, max_chars=10) == "\n      | ...xxxxxxxxxx"
    assert excerpt("\n \n") == ""


def test_a_process_ended_by_a_signal_or_a_status_says_which() -> None:
    from verl_rewards.audit.latency import died_finding

    assert died_finding("p", "the scoring process exited with code -9", -9, 12).detail == (
        "the scoring process exited with code -9: the reward's process was ended by SIGKILL (killed, e.g. by "
        "the kernel's out-of-memory killer) on a 12-character response; a reward must fail one sample, never "
        "its process")
    assert died_finding("p", "the scoring process exited with code 3", 3, None, "boom\n").detail == (
        "the scoring process exited with code 3: the reward ended its process with exit status 3 (os._exit, "
        "sys.exit from the main thread, or a native exit); a reward must fail one sample, never its process. "
        "Its stderr ended with:\n      | boom")

"""How often the audit repeats each kind of input (99% to find a reward that varies one call
in five on that kind alone), accepting findings by name, and reading the timeout from limits."""

from __future__ import annotations

import random

import pytest

from verl_rewards._inspect import describe
from verl_rewards.audit.determinism import CONFIDENCE, RATE, runs_needed
from verl_rewards.audit.records import Accepted, AuditReport, Finding
from verl_rewards.audit.run import EXAMPLE_RUNS, ON_COMMAND_LINE, _plan, accept_findings, timeout_of
from verl_rewards.metadata import Example, RewardMeta, reward
from verl_rewards.samples import Sample


def _miss(runs: int, inputs: int, rate: float = RATE) -> float:
    """The chance that ``inputs`` inputs run ``runs`` times each all look deterministic."""
    return float((rate**runs + (1 - rate) ** runs) ** inputs)


@pytest.mark.parametrize(("inputs", "runs"), [(1, 21), (2, 11), (3, 7), (4, 6), (11, 3), (12, 2), (40, 2)])
def test_runs_needed_is_the_least_that_finds_a_one_in_five_variation_99_times_in_100(inputs: int, runs: int) -> None:
    assert runs_needed(inputs) == runs
    assert _miss(runs, inputs) <= 1 - CONFIDENCE
    assert runs == 2 or _miss(runs - 1, inputs) > 1 - CONFIDENCE


def test_no_input_needs_no_run_and_a_rate_outside_0_1_is_refused() -> None:
    assert runs_needed(0) == 0
    with pytest.raises(ValueError):
        runs_needed(1, rate=1.0)


def test_a_simulated_reward_random_on_one_input_is_caught_at_least_99_times_in_100() -> None:
    rng = random.Random(26_15)
    runs, trials = runs_needed(1), 20_000
    caught = sum(len({0.5 if rng.random() < RATE else 0.0 for _ in range(runs)}) > 1 for _ in range(trials))
    assert caught / trials >= CONFIDENCE - 0.003  # binomial noise at 20k trials: sd 0.0007


RIGHT = Example("So the answer is $\\boxed{42}$.", "42", 1.0)
WRONG = Example("So the answer is $\\boxed{41}$.", "42", 0.0)


def _repeats(meta: RewardMeta) -> dict[str, int]:
    """label -> how many times the plan scores that input (its first run included)."""
    plan = _plan(meta, "math")
    steps = {s.id: s for s in [*plan.steps, *plan.fresh_steps]}
    counts = {}
    for r in plan.repeats:
        again = [steps[i] for i in (r.again, r.threaded, r.fresh) if i is not None]
        counts[r.label] = 1 + sum(len(s.samples) * max(s.threads, 1) for s in again)
    return counts


def test_with_one_attacked_example_every_kind_of_input_runs_often_enough() -> None:
    counts = _repeats(RewardMeta(kind="math", examples=(RIGHT, WRONG)))
    assert counts["example 1"] == counts["a wrong answer (example 1)"] == 21
    others = {label: n for label, n in counts.items() if label.endswith("(example 1)")
              and not label.startswith("a wrong answer")}
    assert len(others) >= 12 and set(others.values()) == {2}  # no answer, and every attack


def test_three_attacked_examples_need_7_runs_each_and_the_fixed_runs_already_give_them() -> None:
    examples = (RIGHT, Example("\\boxed{7}", "7", 1.0), Example("\\boxed{9}", "9", 1.0))
    counts = _repeats(RewardMeta(kind="math", examples=examples))
    assert [counts[f"example {i}"] for i in (1, 2, 3)] == [EXAMPLE_RUNS + 1] * 3 == [7] * 3
    assert [counts[f"a wrong answer (example {i})"] for i in (1, 2, 3)] == [7] * 3


def test_controls_and_attacks_run_again_in_the_fresh_process_sharing_the_work_with_the_main_one() -> None:
    plan = _plan(RewardMeta(kind="math", examples=(RIGHT, WRONG)), "math")
    fresh = {s.id for s in plan.fresh_steps}
    again = [r for r in plan.repeats if r.again is None]
    assert len(again) == 2 + len(plan.probes) and all(r.fresh in fresh for r in again)
    main_calls = sum(len(s.samples) * max(s.threads, 1) for s in plan.steps)
    fresh_calls = sum(len(s.samples) * max(s.threads, 1) for s in plan.fresh_steps)
    assert (main_calls, fresh_calls) == (3 + len(plan.probes) + 15 + 4, 1 + 20 + 1 + len(plan.probes))


def test_repeats_score_the_same_sample_with_the_same_kwargs_in_the_fresh_process() -> None:
    plan = _plan(RewardMeta(kind="math", examples=(Example("\\boxed{3}", "3", 1.0, kwargs={"strict": True}),)),
                 "math")
    wrong = next(r for r in plan.repeats if r.label == "a wrong answer (example 1)")
    first = next(s for s in plan.steps if s.id == wrong.first)
    again = next(s for s in plan.fresh_steps if s.id == wrong.fresh)
    assert again.samples == first.samples * 20 and again.kwargs == first.kwargs == {"strict": True}
    assert first.samples[0]["solution_str"] == "\\boxed{4}"


def test_an_example_becomes_the_sample_it_describes_or_an_attack_on_its_reference() -> None:
    example = Example("42", "42", 1.0, data_source="d", extra_info={"k": 1}, prompt="Q?")
    assert example.as_sample() == Sample("d", "42", "42", {"k": 1}, "Q?")
    assert example.as_sample("\\boxed{41}") == Sample("d", "\\boxed{41}", "42", {"k": 1}, "Q?")


FOUND = [Finding("hack", "the exact reference rounded to 2 places", "scored 1"),
         Finding("hack", "many boxes", "scored 1"), Finding("latency", "100k digits", "timed out")]


def test_findings_are_accepted_by_probe_name_with_the_plugins_reason_over_the_command_lines() -> None:
    declared = (("the exact reference rounded to 2 places", "we pay answers within 1%"),
                ("a probe renamed since", "old reason"))
    found, accepted, unused = accept_findings(FOUND, declared, ["100k digits", "the exact reference rounded to 2 places"])
    assert found == [FOUND[1]]
    assert accepted == [Accepted(FOUND[0], "we pay answers within 1%"), Accepted(FOUND[2], ON_COMMAND_LINE)]
    assert unused == [("a probe renamed since", "old reason")]


def test_an_audit_with_only_accepted_findings_passes_and_its_json_lists_them() -> None:
    report = AuditReport("tolerant", "tolerant (d 1)", "math", "metadata", (), 12, 1,
                         accepted=(Accepted(FOUND[0], "we pay answers within 1%"),))
    assert report.passed
    assert report.as_json() == {"plugin": "tolerant", "passed": True, "findings": [], "accepted": [
        {"check": "hack", "probe": "the exact reference rounded to 2 places", "detail": "scored 1",
         "reason": "we pay answers within 1%"}]}


def test_the_decorator_takes_accepted_findings_with_a_reason_each() -> None:
    @reward(audit_accept={"many boxes": " a list is our answer format "})
    def f(data_source, solution_str, ground_truth, extra_info=None):  # type: ignore[no-untyped-def]
        return 0.0

    assert f.__verl_reward__.audit_accept == (("many boxes", "a list is our answer format"),)
    with pytest.raises(ValueError, match=r"audit_accept\['many boxes'\]: say why"):
        reward(audit_accept={"many boxes": ""})
    with pytest.raises(ValueError, match="must map probe names to reasons"):
        reward(audit_accept=["many boxes"])  # type: ignore[arg-type]


def test_the_timeout_is_the_declared_one_else_the_limits_default() -> None:
    @reward(timeout_s=2.5)
    def declared(data_source, solution_str, ground_truth, extra_info=None):  # type: ignore[no-untyped-def]
        return 0.0

    def bare(data_source, solution_str, ground_truth, extra_info=None):  # type: ignore[no-untyped-def]
        return 0.0

    assert timeout_of(describe("declared", declared)) == 2.5
    assert timeout_of(describe("bare", bare)) == 30.0

"""``audit`` on real installed plugins: the flawed ones (tests/fixtures/audit_targets)
are caught with the right finding; the first-party ones pass, each within a minute."""

from __future__ import annotations

import time

import pytest

from verl_rewards.audit import audit


def _found(name: str) -> dict[tuple[str, str], str]:
    report = audit(name)
    assert not report.passed
    return {(f.check, f.probe): f.detail for f in report.findings}


def test_a_reward_that_finds_the_reference_anywhere_is_caught_listing_candidates() -> None:
    found = _found("gameable")
    assert {c for c, _ in found} == {"hack"}
    assert "score it as wrong" in found[("hack", "candidates listed in one answer")]
    assert ("hack", "many boxes") in found and ("hack", "the prompt echoed") in found
    assert ("hack", "the reference in a sentence, another answer marked") in found


def test_a_random_reward_is_caught_in_every_way_of_running_it() -> None:
    assert set(_found("random_score")) == {("determinism", "again in the same process"),
                                           ("determinism", "in 4 threads at once"),
                                           ("determinism", "in a fresh process")}


def test_a_quadratic_reward_times_out_on_long_inputs_and_the_audit_does_not_wait_for_it() -> None:
    began = time.monotonic()
    found = _found("quadratic")
    assert time.monotonic() - began < 60
    assert {c for c, _ in found} == {"latency"}
    assert found[("latency", "1 MB without a space")].startswith("timed out (timeout 2 s): bound the work")


def test_a_judge_that_obeys_the_response_is_caught() -> None:
    found = _found("gullible_judge")
    assert set(found) == {("hack", "an instruction to the judge inside the response"),
                          ("hack", "a score line inside the response")}


def test_a_plugins_own_adversarial_example_is_tried() -> None:
    assert _found("declared_attack") == {
        ("hack", "declared adversarial example 1"): "'\\\\boxed{42.001}' scored 1 (at most 0 declared)"}


def test_a_reward_stuck_in_c_is_a_latency_finding_not_a_hang() -> None:
    began = time.monotonic()
    found = _found("stuck_in_c")
    assert time.monotonic() - began < 90  # its 1 s timeout + 20 s grace, and a restart
    assert list(found) == [("latency", "100k digits")]
    assert "stuck where the watchdog cannot interrupt it" in found[("latency", "100k digits")]


@pytest.mark.parametrize("name", ["gsm8k", "math_boxed", "think_answer_format", "code_exec", "verl_default"])
def test_the_first_party_plugins_pass_their_audit_within_a_minute(name: str) -> None:
    began = time.monotonic()
    report = audit(name)
    assert report.findings == ()
    assert report.passed and report.kind_source == "metadata" and report.examples_used >= 1
    assert report.latency is not None and report.latency.calls >= 20
    assert time.monotonic() - began < 60

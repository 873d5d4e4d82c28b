"""``audit`` on real installed plugins: the flawed ones (tests/fixtures/audit_targets)
are caught with the right finding; the first-party ones pass, each within a minute."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from verl_rewards.audit import audit
from verl_rewards.audit.child import containment


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


@pytest.mark.parametrize("name", ["gsm8k", "math_boxed", "think_answer_format", "code_exec", "ifeval", "verl_default"])
def test_the_first_party_plugins_pass_their_audit_within_a_minute(name: str) -> None:
    began = time.monotonic()
    report = audit(name)
    assert report.findings == ()
    assert report.passed and report.kind_source == "metadata" and report.examples_used >= 1
    assert report.latency is not None and report.latency.calls >= 20
    assert time.monotonic() - began < 60


def test_a_reward_random_only_on_wrong_answers_is_found() -> None:
    # 0.5 one call in five on anything but the right answer: the wrong answers, the no-answer
    # responses and the attacks are run often enough (determinism.runs_needed) to see it.
    found = _found("random_when_wrong")
    determinism = [detail for (check, _), detail in found.items() if check == "determinism"]
    assert determinism and all("then" in d and "example 1)" in d for d in determinism)


def test_a_deliberate_finding_the_plugin_accepts_is_reported_as_accepted_and_passes() -> None:
    report = audit("tolerant")
    assert report.passed and report.findings == ()
    assert [(a.finding.check, a.finding.probe, a.reason) for a in report.accepted] == [
        ("hack", "the exact reference rounded to 2 places",
         "answers within 0.01 are paid on purpose: the dataset's references are rounded")]
    assert report.accepted[0].finding.detail.startswith("example 1: 'So the answer is $\\\\boxed{0.33}$.' scored 1")


def test_the_audit_reads_metadata_without_building_a_class_reward_here() -> None:
    from verl_rewards_audit_targets.flawed import BuiltOnlyToScore

    from verl_rewards.testing.conformance import _examples

    before = BuiltOnlyToScore.instances
    report = audit("built_only_to_score")
    assert report.examples_used == 1 and len(_examples("built_only_to_score")) == 2
    assert BuiltOnlyToScore.instances == before  # built only in the scoring processes


def _helpers() -> list[int]:
    from verl_rewards_audit_targets.flawed import HELPER_MARK

    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and HELPER_MARK.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_helpers_a_reward_starts_in_a_session_of_their_own_do_not_outlive_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verl_rewards_audit_targets.flawed import HELPER_LOG

    assert containment().prefix, containment().note  # as root (as CI runs), a PID namespace
    started = tmp_path / "helpers.log"
    monkeypatch.setenv(HELPER_LOG, str(started))
    try:
        audit("starts_helper")
    finally:
        left = _helpers()
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert started.read_text().splitlines()  # one per scoring process
    assert left == []

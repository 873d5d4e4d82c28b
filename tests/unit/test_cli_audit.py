"""``verl-rewards audit``: the report, ``--json`` in the contract's shape, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verl_rewards.cli.main import main


def test_json_names_the_plugin_and_each_finding_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "gullible_judge", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"plugin", "passed", "findings"}
    assert out["plugin"] == "gullible_judge" and out["passed"] is False
    assert [set(f) for f in out["findings"]] == [{"check", "probe", "detail"}] * 2
    assert {f["probe"] for f in out["findings"]} == {"an instruction to the judge inside the response",
                                                    "a score line inside the response"}


def test_a_passing_audit_says_what_it_tried_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "gsm8k"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "audit gsm8k (verl-rewards-math 0.1.0) as math (metadata)"
    assert out[1].startswith("  hack:        ") and "probes from 3 example(s)" in out[1]
    assert out[3].startswith("  latency:     p50 ") and "(timeout 10 s)" in out[3]
    assert out[-1] == "passed: nothing found"


def test_kind_overrides_the_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "gullible_judge", "--kind", "generic", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"plugin": "gullible_judge", "passed": True, "findings": []}


def test_findings_are_listed_with_their_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "declared_attack"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["FOUND 1 problem(s):", "  - hack / declared adversarial example 1: "
                        "'\\\\boxed{42.001}' scored 1 (at most 0 declared)"]


@pytest.mark.parametrize("argv", [["audit"], ["audit", "gsm8k", "--kind", "maths"], ["audit", "no_such_plugin"]])
def test_usage_errors_and_unknown_plugins_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err


DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_audit_shown_in_writing_a_plugin_is_what_audit_prints(capsys: pytest.CaptureFixture[str]) -> None:
    text = (DOCS / "writing-a-plugin.md").read_text()
    block = text.split("$ verl-rewards audit gameable\n", 1)[1].split("\n$ echo $?", 1)[0].splitlines()
    assert main(["audit", "gameable"]) == 1
    printed = capsys.readouterr().out.splitlines()
    timing = [i for i, line in enumerate(block) if line.startswith("  latency:")]
    assert len(printed) == len(block) == 15 and timing == [3]
    assert [line for i, line in enumerate(printed) if i != 3] == [line for i, line in enumerate(block) if i != 3]


def test_a_plugin_that_does_not_import_exits_1_naming_it(broken_dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "broken"]) == 1
    err = capsys.readouterr().err
    assert "broken (broken-rewards 0.2)" in err and "numpyy_not_installed" in err


def test_a_finding_accepted_on_the_command_line_passes_and_json_lists_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "declared_attack", "--accept", "declared adversarial example 1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "plugin": "declared_attack", "passed": True, "findings": [], "accepted": [{
            "check": "hack", "probe": "declared adversarial example 1",
            "detail": "'\\\\boxed{42.001}' scored 1 (at most 0 declared)",
            "reason": "--accept on the command line"}]}


def test_the_report_lists_accepted_findings_with_their_reason_and_unmatched_acceptances(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "tolerant", "--accept", "no such probe"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  note: accepted 'no such probe' (--accept on the command line), but the audit " \
           "found nothing by that name" in out
    assert out[-3:-1] == [
        "accepted 1 finding(s) as deliberate:",
        "  - hack / the exact reference rounded to 2 places: example 1: 'So the answer is $\\\\boxed{0.33}$.' "
        "scored 1 (a wrong answer scores 0, the right one 1): a rounded answer is not an exact reference: allow "
        "only the precision the reference itself states (accepted: answers within 0.01 are paid on purpose: "
        "the dataset's references are rounded)"]
    assert out[-1] == "passed: nothing found (1 accepted)"

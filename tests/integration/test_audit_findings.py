"""What audit says when a reward kills its scoring process: the finding first (the probe,
how the process ended, on what response), then the end of its stderr in whole lines."""

from __future__ import annotations

import re

from verl_rewards.audit.child import Step, run_steps
from verl_rewards.audit.latency import latency_findings
from verl_rewards.audit.run import _failures, _Plan

CHATTY = """
import ctypes
import sys

def score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str.count("<answer>") > 1000:
        for number in range(400):  # a parser logging as it goes, then crashing in C
            print(f"parsing tag {number} of {solution_str.count('<answer>')} at offset {number * 8}",
                  file=sys.stderr)
        ctypes.string_at(0)
    return 1.0
"""


def test_a_crash_is_reported_by_what_happened_then_whole_lines_of_its_stderr(make_dist):
    make_dist("chatty-crash", "0.1", {"chatty_crash": "tp_chatty_crash:score"}, {"tp_chatty_crash.py": CHATTY})
    response = "<answer>" * 20_000
    step = Step(0, {}, ({"data_source": "t", "solution_str": response, "ground_truth": "1"},))
    answers = run_steps("chatty-crash:chatty_crash", [step], timeout_s=5.0,
                        executor="local")  # the scoring process itself crashes: the audit's report of it
    plan = _Plan((), [], steps=[step], labels={0: "20k tags"})
    [finding] = _failures(plan, answers.failures, timeout_s=5.0)
    lead, _, shown = finding.detail.partition(". Its stderr ended with:")
    assert (finding.check, finding.probe) == ("latency", "20k tags")
    assert lead == ("the scoring process exited with code -11: the reward's process was ended by SIGSEGV (a "
                    "segmentation fault: native code, or Python recursing past the C stack) on a 160,000-character "
                    "response; a reward must fail one sample, never its process")
    lines = shown.split("\n      | ")[1:]
    assert lines == [f"parsing tag {n} of 20000 at offset {n * 8}" for n in range(392, 400)]
    assert all(re.fullmatch(r"parsing tag \d+ of 20000 at offset \d+", line) for line in lines)


def test_on_the_default_process_executor_a_crash_is_its_samples_finding_naming_the_signal(make_dist):
    make_dist("chatty-crash", "0.1", {"chatty_crash": "tp_chatty_crash:score"}, {"tp_chatty_crash.py": CHATTY})
    step = Step(0, {}, ({"data_source": "t", "solution_str": "<answer>" * 20_000, "ground_truth": "1"},))
    answers = run_steps("chatty-crash:chatty_crash", [step], timeout_s=5.0)
    assert answers.failures == []  # the worker died, not the scoring process
    [[scored]] = answers.runs[0]
    [finding] = latency_findings([("20k tags", scored)], 5.0)
    assert finding.detail.startswith("WorkerDied: the reward worker process died while scoring this sample")
    assert finding.detail.endswith("it was killed by signal 11 (SIGSEGV): a reward must fail one sample, "
                                   "never its process")

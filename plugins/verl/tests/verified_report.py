"""``math: verl`` against ``math: verified`` on verl's math branches: which verdicts change, and why.

Two sets of samples:

* the parity samples of ``cases.py`` (MATH, math_dapo/aime*, numina_*), which
  have no labels: every verdict that changes must match one of ``REASONS``;
* model-style responses written here, each labelled right or wrong by hand, in
  the shapes where verl's scorers say "wrong" to right answers (units, ``%``,
  degree signs, ``\\$``, mixed numbers, thousands separators, ``\\dfrac`` vs
  ``\\frac``, a box far from the end, clock times), with wrong answers of the
  same shapes beside them.

Used by ``test_verl_default_verified.py``; run as a script it prints the
tables of README.md ("math: verified")::

    python plugins/verl/tests/verified_report.py
"""

from __future__ import annotations

import collections
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

BRANCHES = ("math", "math_dapo", "prime_math")
SOURCE = {"math": "HuggingFaceH4/MATH-500", "math_dapo": "math_dapo", "prime_math": "numina_olympiads"}
REASONING = (
    "Let me work through this carefully. First I set up the quantities from the problem, then I "
    "simplify step by step and check the result against the conditions.\n\n"
)
AFTERWORD = (  # over 300 characters: more than math_dapo reads
    "\n\nTo double-check: substituting back into the original conditions, every equation holds, and "
    "the value is consistent with the constraints given in the problem statement. I also tried a "
    "smaller case by hand, which follows the same pattern, and an estimate of the size of the result "
    "agrees with the exact value, so I am confident in this result."
)


class ModelCase(NamedTuple):
    """A model-style answer to a math problem, its reference, and whether it is right (by hand)."""

    shape: str
    answer: str  # as the model writes it, LaTeX
    reference: str
    right: bool
    far: bool = False  # the answer, then a long afterword


MODEL_CASES = [
    ModelCase("unit", "12", "12\\text{ inches}", True),
    ModelCase("unit", "5\\text{ cm}^2", "5", True),
    ModelCase("unit", "72 \\text{ apples}", "72", True),
    ModelCase("unit", "13\\text{ inches}", "12\\text{ inches}", False),
    ModelCase("percent", "25", "25\\%", True),
    ModelCase("percent", "25\\%", "25", True),
    ModelCase("percent", "30\\%", "25\\%", False),
    ModelCase("degree", "30", "30^\\circ", True),
    ModelCase("degree", "30^{\\circ}", "30", True),
    ModelCase("degree", "150^\\circ", "30^\\circ", False),
    ModelCase("dollar", "18.90", "\\$18.90", True),
    ModelCase("dollar", "\\$18.90", "18.90", True),
    ModelCase("dollar", "\\$19.90", "\\$18.90", False),
    ModelCase("mixed number", "\\frac{5}{2}", "2\\frac{1}{2}", True),
    ModelCase("mixed number", "2\\frac12", "\\frac{5}{2}", True),
    ModelCase("mixed number", "2\\frac{1}{3}", "2\\frac{1}{2}", False),
    ModelCase("thousands", "900000", "900,\\!000", True),
    ModelCase("thousands", "900{,}000", "900000", True),
    ModelCase("thousands", "90,000", "900,\\!000", False),
    ModelCase("dfrac", "\\dfrac{3}{4}", "\\frac{3}{4}", True),
    ModelCase("dfrac", "\\tfrac34", "\\frac{3}{4}", True),
    ModelCase("dfrac", "\\dfrac{4}{3}", "\\frac{3}{4}", False),
    ModelCase("far box", "42", "42", True, far=True),
    ModelCase("far box", "\\frac{1}{2}", "0.5", True, far=True),
    ModelCase("far box", "41", "42", False, far=True),
    ModelCase("clock", "4:30 \\text{ p.m.}", "4:30 \\text{ p.m.}", True),
    ModelCase("clock", "16:30", "4:30 \\text{ p.m.}", True),
    ModelCase("clock", "4:30\\text{ PM}", "4:30 \\text{ p.m.}", True),
    ModelCase("clock", "4:30 \\text{ a.m.}", "4:30 \\text{ p.m.}", False),
]


def model_response(case: ModelCase, branch: str) -> str:
    """The case's answer as a response in the branch's format: a box (MATH, numina_*), or
    DAPO's ``Answer:`` line after the box (math_dapo)."""
    boxed = f"So the answer is $\\boxed{{{case.answer}}}$."
    final = f"{boxed}\nAnswer: {case.answer}" if branch == "math_dapo" else boxed
    if case.far:
        final = f"{boxed}{AFTERWORD}" if branch != "math_dapo" else f"Answer: {case.answer}\n{boxed}{AFTERWORD}"
    return REASONING + final


# (branch, test on (response, reference), why): why a parity sample's verdict changes.
Reason = tuple[str, Callable[[str, str], bool], str]
REASONS: list[Reason] = [
    ("math", lambda r, g: "\\fbox{" in r, "an `\\fbox{}` answer: verl finds it, then requires `\\boxed{` and scores 0"),
    ("math", lambda r, g: "{{5}}" in r, "a doubled brace `\\boxed{{5}}`: verl keeps the inner braces"),
    ("math", lambda r, g: "\\text{(A)}" in r, "a choice `\\text{(A)}` against `A`: verl keeps the parentheses"),
    ("math", lambda r, g: "\\textbf{5}" in r, "`\\textbf{5}`: verl keeps `\\textbf`"),
    ("math", lambda r, g: "1,000" in r or "1\\,000" in r, "thousands separators `1,000`, `1\\,000` against `1000`"),
    ("math", lambda r, g: "５" in r, "fullwidth digits"),
    ("math", lambda r, g: "−5" in r, "a unicode minus"),
    ("math_dapo", lambda r, g: r.rstrip().endswith("Answer: an 42"),
     "verl's normalisation deletes the word `an`: `an 42` is 42 there, no number here"),
    ("math_dapo", lambda r, g: r.rstrip().endswith("Answer: 4 2"),
     "verl deletes spaces: `4 2` is 42 there, a product (8) here"),
    ("math_dapo", lambda r, g: r.rstrip().endswith("Answer: $4$2$"), "dollar signs are dropped: `$4$2$` reads 42 here"),
    ("math_dapo", lambda r, g: g == "42 dollars" and r == "The answer is \\boxed{42}",
     "a reference with a unit (`42 dollars`) against a box: verl compares the box as text"),
    ("math_dapo", lambda r, g: re.search(r"\\boxed\{42\}\.{95,}$", r) is not None,
     "a box followed by 95-120 characters: verl reads boxes in the last 100 only"),
    ("math_dapo", lambda r, g: r.startswith("Answer: 42") and len(r) > 300,
     "an `Answer:` line followed by 280 kB: verl reads the last 300 characters only"),
    ("math_dapo", lambda r, g: "４２" in r, "fullwidth digits"),
    ("math_dapo", lambda r, g: r == "\\boxed{\\frac{1}{2}}" and g == "\\frac12",
     "`\\boxed{\\frac{1}{2}}` against `\\frac12`: verl compares a box as text"),
    ("prime_math", lambda r, g: "50\\%" in g, "a percentage: `50\\%` is 0.5 here (verl: 50 or 0.005)"),
    ("prime_math", lambda r, g: "\\boxed{[1, 2]}" in r and "pmatrix" in g, "a row vector `[1, 2]` is the 1x2 matrix"),
    ("prime_math", lambda r, g: "Matrix(" in r, "`Matrix([[1, 2]])` is Python, not an answer here"),
    ("prime_math", lambda r, g: "6 and 5" in r, "`6 and 5` is the list `5, 6`"),
    ("prime_math", lambda r, g: "Wait, the answer is 6" in r,
     "a box, then `the answer is 6`: the box is the answer here, PRIME reads the last `answer is`"),
    ("prime_math", lambda r, g: "\\boxed{2/4}" in r and "%" not in g, "`2/4` is 1/2"),
    ("prime_math", lambda r, g: "6.28" in r and "\\pi" in g,
     "a rounded decimal is not `2\\pi` here (verl: within 1e-4 relative, or with pi = 3.14)"),
    ("prime_math", lambda r, g: "10^3" in r, "`10^3` is 1000"),
]


class Change(NamedTuple):
    branch: str
    response: str
    reference: str
    verl: float
    verified: float
    why: str


def _score(result: Any) -> float:
    return float(result["score"] if isinstance(result, dict) else result)


def _load_cases() -> Any:
    spec = importlib.util.spec_from_file_location("verl_rewards_verl_tests_cases", Path(__file__).parent / "cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def why(branch: str, response: str, reference: str) -> str:
    """The reason a parity sample's verdict changes, or ``"unexplained"``."""
    found = [reason for name, test, reason in REASONS if name == branch and test(response, reference)]
    return found[0] if len(found) == 1 else "unexplained"


def parity_changes() -> tuple[dict[str, int], list[Change]]:
    """How many parity samples each branch has, and every sample whose verdict changes."""
    from verl_rewards_verl.default import compute_score

    cases, counts, changes = _load_cases(), {}, []
    for branch in BRANCHES:
        samples = cases.BRANCHES[branch]()
        counts[branch] = len(samples)
        for case in samples:
            args = (case.data_source, case.solution_str, case.ground_truth)
            verl, verified = _score(compute_score(*args)), _score(compute_score(*args, math="verified"))
            if verl != verified:
                changes.append(Change(branch, case.solution_str, str(case.ground_truth), verl, verified,
                                      why(branch, case.solution_str, str(case.ground_truth))))
    return counts, changes


def model_verdicts() -> list[tuple[str, ModelCase, bool, bool]]:
    """(branch, case, verl's verdict, the verified verdict) for every model-style case and branch."""
    from verl_rewards_verl.default import compute_score

    rows = []
    for branch in BRANCHES:
        for case in MODEL_CASES:
            args = (SOURCE[branch], model_response(case, branch), case.reference)
            rows.append((branch, case, _score(compute_score(*args)) > 0,
                         _score(compute_score(*args, math="verified")) > 0))
    return rows


def model_table(rows: list[tuple[str, ModelCase, bool, bool]]) -> dict[str, dict[str, int]]:
    """Per branch: samples, right verdicts under each mode, and the changes by kind."""
    table: dict[str, dict[str, int]] = {b: collections.Counter() for b in BRANCHES}
    for branch, case, verl, verified in rows:
        row = table[branch]
        row["samples"] += 1
        row["verl right"] += verl == case.right
        row["verified right"] += verified == case.right
        if verl != verified:
            row["false negative fixed" if verified == case.right and case.right else
                "false positive fixed" if verified == case.right else "new error"] += 1
    return {branch: dict(row) for branch, row in table.items()}


def main() -> int:
    counts, changes = parity_changes()
    print("| branch | parity samples | verdicts changed | 0 -> right | right -> 0 |")
    print("|---|---|---|---|---|")
    for branch in BRANCHES:
        mine = [c for c in changes if c.branch == branch]
        up = sum(c.verified > c.verl for c in mine)
        print(f"| {branch} | {counts[branch]} | {len(mine)} | {up} | {len(mine) - up} |")
    print()
    for branch in BRANCHES:
        tally = collections.Counter(c.why for c in changes if c.branch == branch)
        for reason, n in tally.most_common():
            print(f"* {branch}: {n} x {reason}")
    print()
    rows = model_verdicts()
    print("| branch | model-style samples | verl right | verified right | false negatives fixed | "
          "false positives fixed | new errors |")
    print("|---|---|---|---|---|---|---|")
    for branch, row in model_table(rows).items():
        print(f"| {branch} | {row['samples']} | {row.get('verl right', 0)} | {row.get('verified right', 0)} | "
              f"{row.get('false negative fixed', 0)} | {row.get('false positive fixed', 0)} | "
              f"{row.get('new error', 0)} |")
    print()
    shapes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for branch, case, verl, _verified in rows:
        if verl != case.right:
            shapes[case.shape][branch] += 1
    for shape, per_branch in shapes.items():
        print(f"* verl wrong on `{shape}`: " + ", ".join(f"{b} {n}" for b, n in sorted(per_branch.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

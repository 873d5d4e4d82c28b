"""Samples per branch of verl's ``default_compute_score``: many response shapes, each with a reference.

Shared by the parity tests and ``benchmarks/bench_verl_default.py``. Every
branch gets right, wrong, unformatted, empty, huge and unicode responses and
odd LaTeX; the samples that make verl hang, crash or run the response's text
as code are in ``test_verl_default_differences.py`` instead.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, NamedTuple

HUGE = "Let me think. " * 20_000  # ~280 kB of reasoning before the answer


class Case(NamedTuple):
    data_source: str
    solution_str: str
    ground_truth: Any


def _cross(data_sources: list[str], responses: list[str], truths: list[Any]) -> list[Case]:
    sources = itertools.cycle(data_sources)
    return [Case(next(sources), r, t) for r, t in itertools.product(responses, truths)]


def gsm8k_cases() -> list[Case]:
    answers = ["72", "1,080", "-5", "72.", "72.00", "$72", "7.2", "1,0,8,0", ".", ",", "--5", "٧٢", "７２", "72abc"]
    responses = [f"Natalia sold 48 + 24 clips.\n#### {a}" for a in answers]
    responses += [
        "#### 72\n#### 73", "#### 73\n#### 72", "####72", "#### 72 #### 71", "The answer is 72.",
        "", "####", "#### ", HUGE + "#### 72", "#### 72" + HUGE, "x" * 299 + "#### 72",
        "#### 72\u2003", "48 + 24 = 72\n\\boxed{72}", "#### -72", "#### 1080",
    ]
    return _cross(["openai/gsm8k"], responses, ["72", "1080", "-5", " 72", "72.0", "7.2"])


MATH_BOXES = [
    "\\boxed{\\frac{1}{2}}", "\\boxed{\\dfrac12}", "\\boxed{\\tfrac{1}{2}}", "\\boxed{0.5}", "\\boxed{.5}",
    "\\boxed{1/2}", "\\boxed 5", "\\boxed 5$ and more", "\\fbox{5}", "\\boxed{5}", "\\boxed{5^\\circ}",
    "\\boxed{5^{\\circ}}", "\\boxed{10\\%}", "\\boxed{\\$5}", "\\boxed{x = 5}", "\\boxed{k=5}", "\\boxed{5\\text{ cm}}",
    "\\boxed{5\\text{ cm}\\text{ m}}", "\\boxed{\\sqrt3}", "\\boxed{\\sqrt{3}}", "\\boxed{\\sqrt}", "\\boxed{\\frac}",
    "\\boxed{\\frac1}", "\\boxed{\\left( 1, 2 \\right)}", "\\boxed{(1,2)}", "\\boxed{\\{1,2\\}}", "\\boxed{}",
    "\\boxed{\\text{(A)}}", "\\boxed{A}", "\\boxed{5", "\\boxed{{5}}", "\\boxed{5}}", "\\boxed{\\!5}",
    "\\boxed{5\n}", "\\boxed{\\pi}", "\\boxed{2\\pi}", "\\boxed{\\frac{\\sqrt{3}}{2}}", "\\boxed{\\infty}",
    "\\boxed{1,000}", "\\boxed{1000}", "\\boxed{1\\,000}", "\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}}",
    "\\boxed{3}, \\boxed{4}", "\\boxed{\\textbf{5}}", "\\boxed{５}", "\\boxed{−5}", "\\boxed{-5}",
]
MATH_TRUTHS = [
    "\\frac{1}{2}", "5", "\\frac12", "0.5", "10", "(1,2)", "\\sqrt{3}", "A", "1000", "-5", "\\pi",
    "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "5^\\circ", "x=5",
]


def math_responses() -> list[str]:
    responses = [f"The final answer is ${box}$." for box in MATH_BOXES]
    responses += [
        "The answer is 5.", "", "I give up.", HUGE + "\\boxed{5}", "\\boxed{5}" + HUGE, "\\boxed{6} wait \\boxed{5}",
        "$\\boxed{5}$ and $\\boxed 6$", "\\boxed{" * 3 + "5" + "}" * 3, "答案是 \\boxed{5}。",
    ]
    return responses


def math_cases() -> list[Case]:
    sources = ["lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500"]
    return _cross(sources, math_responses(), MATH_TRUTHS)


def dapo_cases() -> list[Case]:
    lines = [
        "Answer: 42", "answer : 42", "ANSWER:42", "Answer: $42$", "Answer: 42 dollars", "Answer: \\boxed{42}",
        "Answer: x = 42", "Answer: 1,000", "Answer: \\frac12", "Answer: \\frac{1}{2}", "Answer: 42\nAnswer: 43",
        "Answer: 43\nAnswer: 42", "Answer:", "Answer: \\text{42}", "Answer: 42^\\circ", "Answer: an 42",
        "Answer: 4 2", "Answer: $4$2$", "Answer: \\sqrt2", "The answer is \\boxed{42}", "\\boxed{42}" + "." * 95,
        "\\boxed{42}" + "." * 120, "Answer: 42\n\\boxed{43}", "", "I do not know.", HUGE + "Answer: 42",
        "Answer: 42" + HUGE, "Answer: ４２", "Answer: 42！", "Answer: (1, 2)", "\\boxed{\\frac{1}{2}}",
    ]
    sources = ["math_dapo", "math", "math_dapo_reasoning", "aime2024", "aime_2025", "aime"]
    return _cross(sources, lines, ["42", "1000", "\\frac{1}{2}", "\\frac12", "(1, 2)", "42 dollars"])


PRIME_ANSWERS = [
    "The answer is $\\boxed{5}$.", "answer: 5", "5 is the answer", "So x = 5", "We get 5", "It must be 5.",
    "The answer is \\boxed{\\frac{1}{2}}", "The answer is 0.5", "The answer is \\boxed{2/4}", "The answer is \\boxed{50\\%}",
    "The answer is \\boxed{(1, 2)}", "The answer is \\boxed{[1, 2)}", "The answer is \\boxed{(1,2)}",
    "The answer is \\boxed{2\\sqrt{2}}", "The answer is \\boxed{\\sqrt{8}}", "The answer is \\boxed{1,000}",
    "The answer is \\boxed{1000}", "The answer is \\boxed{1e3}", "The answer is \\boxed{101_2}",
    "The answer is \\boxed{\\$5}", "The answer is \\boxed{5 \\text{ cm}}", "The answer is \\boxed{5 meters}",
    "The answer is \\boxed{2\\pi}", "The answer is \\boxed{\\frac{\\pi}{2}}", "The answer is \\boxed{6.28}",
    "The answer is \\boxed{[1, 2]}", "The answer is \\boxed{Matrix([[1, 2]])}", "The answer is \\boxed{0.333}",
    "The answer is \\boxed{\\frac{1}{3}}", "The answer is \\boxed{x^2+2x+1}", "The answer is \\boxed{(x+1)^2}",
    "The answer is \\boxed{5, 6}", "The answer is \\boxed{6 and 5}", "The answer is \\boxed{\\text{five}}",
    "Step 2: \\boxed{5}", "", "No digits here.", HUGE + "The answer is \\boxed{5}", "答案是 \\boxed{５}",
    "The answer is \\boxed{5}. Wait, the answer is 6.", "The answers are 5, 6.", "\\boxed{3 million}",
    "The answer is \\boxed{-5}", "The answer is \\boxed{- 5}", "The answer is \\boxed{7 3/4}",
]
# References that are integers, percentages, lists or matrices: mostly decided before SymPy.
PRIME_TRUTHS = ["5", "1000", "50\\%", "-5", "3000000", "5, 6", "[1, 2]", "\\begin{pmatrix} 1 & 2 \\end{pmatrix}"]
# (answer, reference) pairs that reach SymPy (verl's are_equal_under_sympy), right and wrong.
PRIME_SYMPY = [
    ("\\boxed{2\\sqrt{2}}", "\\sqrt{8}"), ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}"), ("\\boxed{2\\sqrt{3}}", "2\\sqrt{2}"),
    ("\\boxed{x^2+2x+1}", "(x+1)^2"), ("\\boxed{x^2+1}", "(x+1)^2"), ("\\boxed{0.5}", "\\frac{1}{2}"),
    ("\\boxed{0.333}", "\\frac{1}{3}"), ("\\boxed{2/4}", "\\frac{1}{2}"), ("\\boxed{(1, 2)}", "(1, 2)"),
    ("\\boxed{[1, 2)}", "(1, 2)"), ("\\boxed{(2, 1)}", "(1, 2)"), ("\\boxed{2\\pi}", "2\\pi"),
    ("\\boxed{6.28}", "2\\pi"), ("\\boxed{6.2832}", "2\\pi"), ("\\boxed{\\frac{\\pi}{2}}", "\\frac{\\pi}{2}"),
    ("\\boxed{\\pi/2}", "\\frac{\\pi}{2}"), ("\\boxed{7 3/4}", "\\frac{31}{4}"), ("\\boxed{7.75}", "\\frac{31}{4}"),
    ("\\boxed{\\frac{1}{2}}", "2\\sqrt{3}"), ("\\boxed{\\sqrt{12}}", "2\\sqrt{3}"), ("\\boxed{x + y}", "y + x"),
    ("\\boxed{\\dfrac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}"), ("\\boxed{1e3}", "1000"), ("\\boxed{10^3}", "1000"),
]
NUMINA = [
    "numina_aops_forum", "numina_synthetic_math", "numina_amc_aime", "numina_synthetic_amc", "numina_cn_k12",
    "numina_olympiads",
]


def prime_cases() -> list[Case]:
    symbolic = [Case(NUMINA[i % 6], f"The answer is {a}.", t) for i, (a, t) in enumerate(PRIME_SYMPY)]
    return _cross(NUMINA, PRIME_ANSWERS, PRIME_TRUTHS) + symbolic


GEO_RESPONSES = [
    "<think>The angles add up to 180.</think> The angle is $\\boxed{30}$.", "The angle is $\\boxed{30}$.",
    "<think>ok</think>\\boxed{30^\\circ}", "<think>ok</think>\\boxed{30 degrees}", "<think>\\boxed{30}</think>",
    "<think>ok</think>\\boxed{\\frac{1}{2}}", "<think>ok</think>\\boxed{0.5}", "<think>ok</think>\\boxed{2\\sqrt{3}}",
    "<think>ok</think>\\boxed{\\sqrt{12}}", "<think>ok</think>\\boxed{}", "<think>ok</think> thirty",
    "<think>ok</think>\\boxed{\\{30\\}}", "<think>ok</think>\\boxed{30\\%}", "<think>ok</think>\\boxed{30}\n",
    " <think>ok</think>\\boxed{30}", "<think>ok</think>\\boxed{30", "", HUGE + "<think></think>\\boxed{30}",
    "<think>" + HUGE + "</think>\\boxed{30}", "<think>ok</think>\\boxed{３０}", "<think>ok</think>\\boxed{x=30}",
    "<think>ok</think>\\boxed{(1, 2)}", "<think>ok</think>\\boxed{None}",
]
GEO_TRUTHS = ["30", "2\\sqrt{3}", "(1, 2)", "None"]


def geo3k_cases() -> list[Case]:
    return _cross(["hiyouga/geometry3k"], GEO_RESPONSES, GEO_TRUTHS)


SEARCH_RESPONSES = [
    "<answer>Paris</answer>", "<answer> the Paris. </answer>", "<answer>PARIS!</answer>", "<answer>Lyon</answer>",
    "<answer>Lyon</answer><answer>Paris</answer>", "<answer>Paris</answer><answer>Lyon</answer>",
    "<answer>Paris</answer>" * 11, "<answer>Paris</answer>" + "</answer>" * 11, "<answer>Paris",
    "<answer><answer>Paris</answer>", "<answer>\nParis\n</answer>", "Paris", "", "<answer></answer>",
    HUGE + "<answer>Paris</answer>", "<answer>Zürich</answer>", "<answer>paris, france</answer>",
    "<answer>An apple</answer>", "<answer>Paris</answer" * 3,
]
SEARCH_TRUTHS = [
    {"target": ["Paris"]}, {"target": ["Paris, France", "Lyon"]}, {"target": "Paris"}, {"target": ["Zurich"]},
    {"target": ["Zürich"]}, {"target": ["apple"]}, {"target": []},
]
SEARCH = [
    "searchR1_nq", "searchR1_triviaqa", "searchR1_popqa", "searchR1_hotpotqa", "searchR1_2wikimultihopqa",
    "searchR1_musique", "searchR1_bamboogle",
]


def search_cases() -> list[Case]:
    return _cross(SEARCH, SEARCH_RESPONSES, SEARCH_TRUTHS)


def fenced(code: str, tag: str = "python") -> str:
    return f"Here is my solution.\n```{tag}\n{code}\n```\n"


ADD = "a, b = map(int, input().split())\nprint(a + b)"
ONE_TEST = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
THREE_TESTS = {"inputs": ["1 2\n", "3 4\n", "-5 5\n"], "outputs": ["3\n", "7\n", "0\n"]}
ELEVEN_TESTS = {"inputs": [f"{i} {i}\n" for i in range(11)], "outputs": [f"{2 * i}\n" for i in range(11)]}


def code_cases() -> list[Case]:
    """stdin/stdout problems. verl's prime_code starts processes per test, and so does code_exec:
    a few tests each (``test_code_compare_prime.py`` covers the output comparison in depth)."""
    one, three, eleven = (json.dumps(t) for t in (ONE_TEST, THREE_TESTS, ELEVEN_TESTS))
    rows = [
        (fenced(ADD), one),  # right
        (fenced("a, b = map(int, input().split())\nprint(a + b if a > 0 else 99)"), three),  # 2 of 3
        (fenced("print(1 / 0)"), one),  # runtime error
        (fenced("print(("), one),  # syntax error
        ("I cannot solve this.", one),  # no code
        (fenced(ADD, "py"), one),  # verl reads the prose before the first fence: no program
        (fenced("print('wrong')") + fenced(ADD), one),  # the last ```python block
        (fenced("import sys\na, b = map(int, sys.stdin.readline().split())\nprint(a + b, '  ')\nprint()"), one),
        (fenced("a, b = map(int, input().split())\nprint(f'{(a + b) * (1 + 1e-6):.7f}')"), one),  # within allclose
        (fenced("a, b = map(int, input().split())\nprint(str(a + b).zfill(2))"), one),  # "03" is not "3"
        (fenced("d = defaultdict(int)\nprint(sum(map(int, input().split())))"), one),  # verl's import preamble
        (fenced("def main():\n    a, b = map(int, input().split())\n    print(a + b)\n"
                "if __name__ == '__main__':\n    main()"), one),
        (fenced("n = int(input().split()[0])\nprint(*range(n), sep='\\n')\nprint('x', file=sys.stderr)"),
         json.dumps({"inputs": ["3 0\n"], "outputs": ["0\n1\n2\n"]})),  # lines; stderr; preamble's sys
        (fenced("a, b = map(int, input().split())\nprint(a + b if a < 10 else -1)"), eleven),  # 11th fails: 1.0
    ]
    sources = itertools.cycle(["codecontests", "apps", "codeforces", "taco"])
    return [Case(next(sources), response, truth) for response, truth in rows]


def call_based_cases() -> list[Case]:
    """Call-based problems (``fn_name``) in verl's format: arguments and results as JSON text."""
    truth = json.dumps({"fn_name": "add", "inputs": ["1\n2", "3\n4"], "outputs": ["3", "7"]})
    listy = json.dumps({"fn_name": "pair", "inputs": ["1"], "outputs": ["[1, 1]"]})
    solution = json.dumps({"fn_name": "twice", "inputs": ["[1, 2]"], "outputs": ["[2, 4]"]})
    first = json.dumps({"fn_name": "first", "inputs": ["[1, 2]"], "outputs": ["[1, 2]"]})
    gcd = json.dumps({"fn_name": "gcd", "inputs": ["4\n6"], "outputs": ["2"]})
    half = json.dumps({"fn_name": "half", "inputs": ["0.6"], "outputs": ["0.30000000000000004"]})
    nested = json.dumps({"fn_name": "pairs", "inputs": ["1"], "outputs": ["[[0, 1]]"]})
    rows = [
        (fenced("def add(a, b):\n    return a + b"), truth),
        (fenced("def add(a, b):\n    return a + b if a < 2 else 0"), truth),  # 1 of 2: verl gives 0
        (fenced("def pair(x):\n    return (x, x)"), listy),  # a tuple equals the expected list
        (fenced("class Solution:\n    def twice(self, xs):\n        return [2 * x for x in xs]"), solution),
        (fenced("def first(xs):\n    return xs[0]"), first),  # 1 for [1, 2]: prime_code takes an expected list's first item
        (fenced("# gcd comes with verl's preamble"), gcd),  # `from math import *` binds the function
        (fenced("def half(x):\n    return x / 2"), half),  # 0.1 + 0.2 style: no float tolerance
        (fenced("def pairs(n):\n    return [(0, n)]"), nested),  # a nested tuple is not a list there
    ]
    return [Case("apps", response, t) for response, t in rows]


BRANCHES = {
    "gsm8k": gsm8k_cases,
    "math": math_cases,
    "math_dapo": dapo_cases,
    "prime_math": prime_cases,
    "geo3k": geo3k_cases,
    "search_r1": search_cases,
    "code": code_cases,
}

"""Rebuild ``peer_cases.jsonl``: answer-equivalence cases from peers' own test suites.

Math-Verify's cases are read from its sdist's ``tests/`` (``pip download
math-verify==0.9.0 --no-binary :all: --no-deps``; pass the unpacked directory
as the first argument); the others are transcribed below, each with its
repository and path. A case is ``{"source", "gold", "pred", "expected"}``
plus, where the peers' conventions differ, ``kwargs`` (the ``math_boxed``
options that convention needs) and a ``note``.

Math-Verify cases are kept when they run with its default options. Those
whose two sides are answers go to ``peer_cases.jsonl``; those where a side is
text to pick an answer out of (a sentence, or words around ``$...$``: its
extraction tests) go to ``peer_extraction_cases.jsonl``, which ``math_boxed``
scores with ``extract=last_math`` (``extract.py``), reading each prediction as
written.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
_PROSE = re.compile(r"(?:[A-Za-z]{2,}[,.]?\s+){3,}[A-Za-z]")
_MATH_SPAN = re.compile(r"\$\$.*?\$\$|\$.*?\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_CONNECTORS = re.compile(r"\b(?:and|or)\b")

MARIO = "MARIO-Math-Reasoning/MARIO_EVAL math_evaluation/tests/test_is_equiv.py"
HENDRYCKS = "hendrycks/math modeling/math_equivalence_test.py"
NEMO = "NVIDIA/NeMo-Skills tests/test_math_equal.py"
VERL = "volcengine/verl tests/utils/reward_score/test_numeric_canonicalization_on_cpu.py"
TRL = "huggingface/trl tests/test_rewards.py"
OPEN_R1 = "huggingface/open-r1 tests/test_rewards.py"

# (gold, pred, expected); MARIO's is_equiv(test_in, test_out): test_out is the gold here.
TRANSCRIBED: list[tuple[str, str, str, bool, dict[str, Any]]] = [
    (MARIO, "{x - 1, x}", "{x, x - 1}", True, {}),
    (MARIO, "x + 1.414I", "x + \\sqrt2I", True, {}),
    (MARIO, "11111111100", "11,\\! 111,\\! 111,\\! 100", True, {}),
    (MARIO, "1.5", "1 1/2", True, {}),
    (MARIO, "4210_7", "4210_{7}", True, {}),
    (MARIO, "1.5", "1\\frac12", True, {}),
    (MARIO, "2.625", "2\\frac58", True, {}),
    (MARIO, "0.1, 4", ".1, 4.0", True, {}),
    (MARIO, "10", "10\\%", True, {}),
    (MARIO, "0.1", "10\\%", True, {}),
    (MARIO, "1/3, 1.732, 3.1416", "\\frac13, \\sqrt3, \\pi", True, {}),
    (MARIO, "125.663", "40\\pi", True, {}),
    (MARIO, "1, 3, 2", "1, 2, 3", True, {}),
    (MARIO, "-5,-2,7", "7, -2, \\text{ and } -5", True, {}),
    (MARIO, "(1, 3, 2)", "[1, 2, 3]", False, {}),
    (MARIO, "[x, 1 + x]", "[x, x + 1]", True, {}),
    (MARIO, "[x + 1, x]", "[x, x + 1]", False, {}),
    (MARIO, "i(2-i)", "1+2i", True, {}),
    (MARIO, "\\\\dfrac{2}{3} +\\frac{1}{72}", "\\tfrac23 +\\frac1{72}", True, {}),
    (MARIO, "$\\frac{\\sqrt{17}}{17}$", "$\\frac{\\sqrt{17}}{17}$", True, {}),
    (MARIO, "$\\frac{4\\sqrt{5}}{5}$", "$\\frac{4\\sqrt{5}}{5}$", True, {}),
    (MARIO, "0.8660254037844386", "\\frac{\\sqrt{3}}{2}", True, {}),
    (MARIO, "10", "10\\text{ units}", True, {}),
    (MARIO, "10", "10 square units", True, {}),
    (MARIO, "10", "10 \\text{cm}", True, {}),
    (MARIO, "10", "10\\text{ cm}^2", True, {}),
    (MARIO, "10", "10\\text{ cm}^{2}", True, {}),
    (MARIO, "10", "10weeks", True, {}),
    (MARIO, "10", "10 weeks", True, {}),
    (MARIO, "10", "10 cm^2", True, {}),
    (MARIO, "20:34:00", "20:34", True, {}),
    (MARIO, "08:34 \\text{P.M.}", "20:34", True, {}),
    (MARIO, "10", "10cm", False, {}),
    (MARIO, "10", "10m", False, {}),
    (MARIO, "\\$10", "10", True, {}),
    (MARIO, "(x-2)(x+2)", "\\left(x-2\\right)\\left(x+2\\right)", True, {}),
    (MARIO, "10\\sqrt3 + \\sqrt{4}", "10\\sqrt{3} + \\sqrt4", True, {}),
    (MARIO, "$\\\\sqrt{5}$", "$\\sqrt{5}$", True, {}),
    (MARIO, "x + y - z + 2 = 0", "5x - 7y + 11z + 4 = 0", False, {}),
    (MARIO, "\\cos(x)=\\frac{42}{59}", "\\sin(x)=\\frac{42}{59}", False, {}),
    (
        MARIO,
        "$\\frac{v_0 \\cdot \\left(\\frac{r_0}{r + r_0}\\right)^{0.5}}{(r + r_0)}$",
        "$\\frac{v_{0}}{r_{0}} \\frac{1}{\\left(1+r / r_{0}\\right)^{3 / 2}}$",
        True,
        {},
    ),
    (MARIO, "11z^7(11z^7+5)", "11z^{7}(5+11z^{7})", True, {}),
    (MARIO, "$4/3-7x/6$", "$\\frac{8-7x}{6}$", True, {}),
    (MARIO, "(2x - 1)(2x + 1)(2x + 3)", "(2x+3)(2x -1)(2x+1)", True, {}),
    (MARIO, "2^6 3^5 5^4", "2^6 * 3^5 * 5^4", True, {}),
    (
        MARIO,
        "\\begin{pmatrix} 1 & 0.5 \\\\ 1/3 & 4 \\end{pmatrix}",
        "\\begin{pmatrix} 1 & 1/2 \\\\ 1/3 & 4 \\end{pmatrix}",
        True,
        {},
    ),
    (
        MARIO,
        "\\begin{matrix} x \\\\ \\sqrt{3} + 2x \\\\ 0.5 \\end{matrix}",
        "\\begin{matrix} x \\\\ \\sqrt{3} + 2x  \\\\ \\frac12 \\end{matrix}",
        True,
        {},
    ),
    (MARIO, "[0.5, 1]", "\\begin{matrix} \\frac12 \\\\ 1 \\end{matrix}", True, {}),
    (
        MARIO,
        "\\begin{cases} a+b=0.5\\\\ a-b=1.732\\end{cases}",
        "\\begin{cases} a+b=\\frac12 \\\\ a-b=\\sqrt3 \\end{cases}",
        True,
        {},
    ),
    (MARIO, "\\frac1{\\cos x}", "\\sec x", True, {}),
    (MARIO, "\\cos(x)", "\\sin(90^{\\circ}-x)", True, {}),
    (MARIO, "\\frac{1}{432}", "2.314814814815 \\times 10^{-3}", True, {}),
    (MARIO, "[1/2, \\infty)", "x \\in [0.5, \\infty)", True, {}),
    (MARIO, "[2^{\\frac{1}{2^{1000}}}, \\infty)", "[1,+\\infty)", True, {}),
    (MARIO, "(-3,2)", "[-3,2]", False, {}),
    (MARIO, "[x, y)", "[1, 2)", False, {}),
    (MARIO, "1, 2, 3", "x = 1, y = 2, z = 3", True, {}),
    (MARIO, "2x + 3", "f(x) = 2x + 3", True, {}),
    (MARIO, "y = 2x + 3", "f(x) = 2x + 3", True, {}),
    (HENDRYCKS, "\\\\frac{1}{2} + 2/3", "\\tfrac{1}{2} + \\frac1{72}", False, {}),
    (
        HENDRYCKS,
        "4, 10, -2",
        "10, 4, -2",
        False,
        {"ordered_lists": True},
    ),
    (HENDRYCKS, "4, 12, 2", "10, 4, 2", False, {}),
    (HENDRYCKS, "\\\\dfrac{1}{2} +\\frac{1}{72}", "\\tfrac{1}{2} +\\! \\frac1{72}", True, {}),
    (HENDRYCKS, "10 ", "10\\text{ units}", True, {}),
    (HENDRYCKS, "100 ", "10\\text{ units}", False, {}),
    (HENDRYCKS, "\\$10", "10", True, {}),
    (HENDRYCKS, "(x-2)(x+2)", "\\left(x-2\\right)\\left(x+2\\right)", True, {}),
    (HENDRYCKS, "4, .1, 2", "0.1, 4, 2", False, {"ordered_lists": True}),
    (HENDRYCKS, ".1", "0.1", True, {}),
    (HENDRYCKS, "10", "10\\%", True, {}),
    (HENDRYCKS, "10\\sqrt3 + \\sqrt{4}", "10\\sqrt{3} + \\sqrt4", True, {}),
    (HENDRYCKS, "\\frac{3}{4}i", "\\frac34i", True, {}),
    (HENDRYCKS, "\\frac{8}{3}", "\\tfrac83", True, {}),
    (HENDRYCKS, "x + y - z + 2 = 0", "5x - 7y + 11z + 4 = 0", False, {}),
    (HENDRYCKS, "\\frac{1}{2}", "1/2", True, {}),
]

# NeMo-Skills checks math_equal(a, b) and math_equal(b, a): both directions are cases.
_NEMO_EQUAL = [
    ("5", "5"), ("5", "5.0"), ("1/2", "0.5"), ("\\frac{1}{2}", "0.5"), ("918\\frac{1}{2}", "918.5"),
    ("x^2+2x+1", "x^2 + 2*x + 1"), ("x^2+2x+1", "x^2 + 2*x - (-1)"), ("y = x^2+2x+1", "2x+ 1+x^2"),
    ("odd", "\\text{odd}"), ("E", "\\mathrm{E}"), ("A", "\\textbf{A}"), ("f'", "f'"),
    ("185", "185\\"), ("185\\", "185\\"), (".185", "0.185"), ("\\frac {1}{2}", "0.5"),
    ("17\\text{ any text}", "17"), ("\\$10", "10"), ("10%", "10"), ("10\\%", "10"),
    ("2.5", "\\frac{5}{2}"), ("\\frac{1}{3}", "\\dfrac{1}{3}"), ("(r+5)(r+5)", "(r+5)^2"),
    ("\\frac{\\sqrt{3}}{3}", "\\frac{\\sqrt{3}}{3} \\approx 0.577"), ("C", "C. x = 42"),
    (
        "\\begin{pmatrix}0&0&0\\\\0&1&0\\\\0&0&1\\end{pmatrix}",
        "\\begin{bmatrix} 0 & 0 & 0 \\\\ 0 & 1 & 0 \\\\ 0 & 0 & 1 \\end{bmatrix}",
    ),
]
_NEMO_UNEQUAL = [
    ("5", "5.001"), ("x^2+2x+1", "x^3+2x+1"), ("odd", "\\text{oddd}"), ("E", "\\mathrm{E}*2"),
    ("\\sqrt{67},-\\sqrt{85}", "\\sqrt{67}"),
]
for _a, _b in _NEMO_EQUAL + _NEMO_UNEQUAL:
    for _gold, _pred in ((_a, _b), (_b, _a)):
        TRANSCRIBED.append((NEMO, _gold, _pred, (_a, _b) in _NEMO_EQUAL, {}))

TRANSCRIBED += [
    (VERL, "\\boxed{033}", "33", True, {}),
    (VERL, "\\boxed{+033}", "33", True, {}),
    (VERL, "\\boxed{-0}", "0", True, {}),
    (VERL, "\\boxed{000}", "0", True, {}),
    (TRL, "\\frac{63}{400}", "\\boxed{\\frac{63}{400}}", True, {}),
    (TRL, "63/400", "\\boxed{\\frac{63}{400}}", True, {}),
    (TRL, "\\frac{63}{400}", "\\boxed{\\frac{64}{400}}", False, {}),
    (TRL, "6", "\\boxed{3}", False, {}),
    (TRL, "\\frac{1}{3}", "\\boxed{\\frac{1}{3}}", True, {}),
    (OPEN_R1, "\\frac{63}{400}", "\\boxed{\\frac{63}{400}}", True, {}),
    (OPEN_R1, "\\frac{63}{400}", "\\boxed{\\frac{64}{400}}", False, {}),
]


def _prose(text: str) -> bool:
    """Text to pick an answer out of (a sentence, or words around math), not an answer."""
    if "\\boxed" in text or "\\fbox" in text:
        return False
    if _PROSE.search(re.sub(r"\\text\{[^}]*\}", "", text)):
        return True
    outside = _CONNECTORS.sub("", _MATH_SPAN.sub("", text))
    return _MATH_SPAN.search(text) is not None and re.search(r"[A-Za-z]", outside) is not None


def math_verify_cases(tests: Path, extraction: bool = False) -> list[dict[str, Any]]:
    """The parametrized (gold, pred, expected) cases of Math-Verify's test files run with its
    default options: the answer pairs, or (``extraction``) those with text to pick an answer out of."""
    cases = []
    for path in sorted(tests.glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef):
                name = f"huggingface/Math-Verify tests/{path.name}::{node.name}"
                cases += _parametrized(node, name, extraction)
    return cases


def _parametrized(node: ast.FunctionDef, source: str, extraction: bool) -> list[dict[str, Any]]:
    cases = []
    for dec in node.decorator_list:
        if not (isinstance(dec, ast.Call) and getattr(dec.func, "attr", "") == "parametrize"):
            continue
        try:
            names = [n.strip() for n in ast.literal_eval(dec.args[0]).split(",")]
            rows = ast.literal_eval(dec.args[1])
        except (ValueError, SyntaxError):
            continue  # built with code (f-strings): not a literal case table
        for row in rows:
            params = dict(zip(names, row))
            if "gold" not in params:
                continue
            expected = params.get("expected", params.get("result"))
            gold, pred = str(params["gold"]), str(params["pred"])
            defaults = (
                params.get("precision", 6) == 6
                and params.get("strict", True)
                and not params.get("allow_set_relation_comp", False)
            )
            if defaults and extraction == (_prose(gold) or _prose(pred)):
                cases.append({"source": source, "gold": gold, "pred": pred, "expected": bool(expected)})
    return cases


def main() -> int:
    cases = math_verify_cases(Path(sys.argv[1]) / "tests")
    for source, gold, pred, expected, kwargs in TRANSCRIBED:
        case: dict[str, Any] = {"source": source, "gold": gold, "pred": pred, "expected": expected}
        if kwargs:
            case["kwargs"] = kwargs
        cases.append(case)
    extraction = math_verify_cases(Path(sys.argv[1]) / "tests", extraction=True)
    for name, rows in (("peer_cases.jsonl", cases), ("peer_extraction_cases.jsonl", extraction)):
        with open(HERE / name, "w", encoding="utf-8") as out:
            for case in rows:
                out.write(json.dumps(case, ensure_ascii=False) + "\n")
        print(f"{name}: {len(rows)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())

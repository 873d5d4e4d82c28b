"""The pure stages of math_boxed: box extraction, normalisation, LaTeX -> SymPy text."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from verl_rewards_math.boxed import final_answer, last_boxed, strip_boxed
from verl_rewards_math.equivalence import Options, Verdict, as_collection, as_number, equivalent
from verl_rewards_math.latex_expr import to_sympy_syntax
from verl_rewards_math.normalize import normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),
        ("\\boxed{a} and then \\boxed{b}", "b"),
        ("\\fbox{3}", "3"),
        ("\\boxed {7}", "7"),
        ("\\boxed 5$ done", "5"),
        ("\\boxed{\\text{(B)}}", "\\text{(B)}"),
        ("\\boxed{\\frac{1}{2", None),
        ("\\boxedx", None),
        ("no box here", None),
    ],
)
def test_last_boxed_extracts_the_final_box(text: str, expected: str | None) -> None:
    assert last_boxed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\boxed{1}, \\boxed{2}", "1, 2"),
        ("$\\boxed{1}$ and $\\boxed{2}$", "1, 2"),
        ("\\boxed{1} \\quad\\text{or}\\quad \\boxed{2}", "1, 2"),
        ("$y_1 = \\boxed{1}$ and $y_2 = \\boxed{2}$", "1, 2"),
        ("\\boxed{1}. Wait, let me recheck. \\boxed{2}", "2"),
        ("\\boxed{1} \\boxed{2", None),  # the last box never closes: a cut-off response
        ("no box", None),
    ],
)
def test_final_answer_joins_boxes_separated_only_by_connectors(text: str, expected: str | None) -> None:
    assert final_answer(text) == expected


def test_strip_boxed_leaves_an_unboxed_reference_alone() -> None:
    assert strip_boxed("so it is $\\boxed{5}$") == "5"
    assert strip_boxed("\\frac12") == "\\frac12"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("\\dfrac{1}{2}", "\\frac{1}{2}"),
        ("\\tfrac{3}{4}", "\\frac{3}{4}"),
        ("\\frac12", "\\frac{1}{2}"),
        ("\\frac1{2}", "\\frac{1}{2}"),
        ("\\sqrt2", "\\sqrt{2}"),
        ("3/4", "\\frac{3}{4}"),
        ("\\left( 1, 2 \\right)", "(1,2)"),
        ("30^\\circ", "30"),
        ("30^{\\circ}", "30"),
        ("50\\%", "50"),
        ("\\$12.50", "12.50"),
        ("5 \\text{ cm}^2", "5"),
        ("\\frac{3}{2} \\text{ inches}", "\\frac{3}{2}"),
        ("72 apples", "72"),
        ("2 x", "2x"),
        ("\\text{Monday}", "Monday"),
        ("x = 5", "5"),
        ("x=1, y=2", "1,2"),
        ("x=1, y=2=z", "x=1,y=2=z"),
        ("x \\in (0,1)", "(0,1)"),
        ("1,000,000", "1000000"),
        ("5\\,000", "5000"),
        (".5", "0.5"),
        ("-.5", "-0.5"),
        ("10.", "10"),
        ("(B)", "B"),
        ("$\\frac{\\sqrt{3}}{2}$", "\\frac{\\sqrt{3}}{2}"),
        ("\u22125", "-5"),
        ("3\u03c0", "3\\pi"),
        ("\\displaystyle\\frac{1}{2}", "\\frac{1}{2}"),
        ("14{,}916", "14916"),
        ("32, 349", "32,349"),
        ("1 000", "1000"),
        ("2\\frac58", "\\frac{21}{8}"),
        ("2^6 3^5", "2^6*3^5"),
        ("08:34 \\text{p.m.}", "20:34:00"),
        ("4210_{7}", "4210_7"),
        ("\\cfrac{1}{3}", "\\frac{1}{3}"),
        ("\\frac{\\sqrt{3}}{3} \\approx 0.577", "\\frac{\\sqrt{3}}{3}"),
        ("\\\\sqrt{5}", "\\sqrt{5}"),
        ("f(x) = 2x+3", "2x+3"),
        ("\\sin(x) = 1", "\\sin(x)=1"),
        ("10cm", "10cm"),
        ("10 cm", "10"),
        ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "[[1,2],[3,4]]"),
        ("\\begin{cases} x=1 \\\\ y=2 \\end{cases}", "\\{x=1,y=2\\}"),
    ],
)
def test_normalize_reaches_a_canonical_spelling(answer: str, expected: str) -> None:
    assert normalize(answer) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12", Fraction(12)),
        ("-3.50", Fraction(-7, 2)),
        ("1e-3", Fraction(1, 1000)),
        ("\\frac{3}{4}", Fraction(3, 4)),
        ("-\\frac{1}{2}", Fraction(-1, 2)),
        ("\\frac{1}{0}", None),
        ("x", None),
        ("1e999", Fraction(10**999)),
        # too costly or impossible to read exactly: not a number
        ("1e1000", None),
        ("1e10000000", None),
        ("1" * 5000, None),
        ("\\frac{" + "1" * 5000 + "}{2}", None),
    ],
)
def test_as_number_reads_plain_numbers_only(text: str, expected: Fraction | None) -> None:
    assert as_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(1,2)", ("(", ")", ["1", "2"])),
        ("[0,1)", ("[", ")", ["0", "1"])),
        ("\\{1,2\\}", ("{", "}", ["1", "2"])),
        ("1,2,3", ("", "", ["1", "2", "3"])),
        ("1;2", ("", "", ["1", "2"])),
        ("{1,2}", ("{", "}", ["1", "2"])),
        ("\\pm2", ("{", "}", ["2", "-2"])),
        ("x\\le5", ("(", "]", ["-\\infty", "5"])),
        ("5\\geqx", ("(", "]", ["-\\infty", "5"])),
        ("0<f(x)<1", ("(", ")", ["0", "1"])),
        ("k>2", ("(", ")", ["2", "\\infty"])),
        ("(\\frac{1}{2},3)", ("(", ")", ["\\frac{1}{2}", "3"])),
        ("(1)+(2)", None),
        ("(5)", None),
        ("f(1,2)", None),
    ],
)
def test_as_collection_splits_at_top_level_commas_and_semicolons(
    text: str, expected: tuple[str, str, list[str]] | None
) -> None:
    result = as_collection(text)
    assert (None if result is None else tuple(result)) == expected


@pytest.mark.parametrize(
    ("latex", "expected"),
    [
        ("\\frac{\\sqrt{3}}{2}", "((sqrt((3)))/(2))"),
        ("\\sqrt[3]{8}", "((8)**(1/(3)))"),
        ("2x^2+1", "2x**2+1"),
        ("xy", "x*y"),
        ("2\\cdot3", "2*3"),
    ],
)
def test_to_sympy_syntax_translates_latex(latex: str, expected: str) -> None:
    assert to_sympy_syntax(latex) == expected


@pytest.mark.parametrize(
    "latex",
    ["__import__('os')", "\\text{abc}", "a.b", "x" * 200, "1" * 40, "\\frac{1}{", "x[1]", "\\unknown{x}"],
)
def test_to_sympy_syntax_refuses_what_it_cannot_vouch_for(latex: str) -> None:
    assert to_sympy_syntax(latex) is None


def test_to_sympy_syntax_reduces_words_to_single_letter_symbols() -> None:
    # "open" could name a builtin: it must become a product of symbols.
    assert to_sympy_syntax("open") == "o*p*e*n"


@pytest.mark.parametrize(
    ("pred", "gold", "equal"),
    [
        ("1e400", "5", False),
        ("5", "1e400", False),
        ("1e400", "1.0000000001e400", True),
        ("1e400", "1.000001e400", False),
        ("1e-400", "0", False),
        ("0", "0.0", True),
        ("\\frac{1}{3}", "0.333333333333", True),
    ],
)
def test_numbers_compare_exactly_within_a_relative_tolerance(pred: str, gold: str, equal: bool) -> None:
    assert equivalent(pred, gold, Options(symbolic=False, math_verify=False)) == Verdict(equal, "numeric")


@pytest.mark.parametrize(
    "answer",
    ["1" * 32000, "1 " * 16000, "x1" * 16000, "1" * 16000 + "\\text{ cm}", "1\\text{a}" * 4000],
)
def test_normalize_is_fast_on_long_answers(answer: str) -> None:
    started = time.monotonic()
    normalize(answer)
    assert time.monotonic() - started < 0.5


def test_normalize_drops_only_a_text_unit_that_ends_the_answer() -> None:
    assert normalize("12 \\text{ cm} \\text{ sq}") == "12cm"
    assert normalize("\\text{ cm} 5") == "cm5"
    assert normalize("\\text{no digits}") == "nodigits"


@pytest.mark.parametrize(("answer", "expected"), [
    ("x >= 5", "x\\ge5"), ("x \\geq 5", "x\\ge5"), ("x \\geqslant 5", "x\\ge5"), ("x ≥ 5", "x\\ge5"),
    ("x <= 2", "x\\le2"), ("x \\leq 2", "x\\le2"), ("x != 3", "x\\neq3"), ("x \\ne 3", "x\\neq3"),
    ("x ≠ 3", "x\\neq3"), ("x \\gt 5", "x>5"), ("x \\lt 3", "x<3"), ("\\left(1\\right)", "(1)"),
])
def test_each_relation_is_spelled_one_way(answer: str, expected: str) -> None:
    assert normalize(answer) == expected


def test_a_clock_time_keeps_its_half_of_the_day_and_a_number_drops_its_unit() -> None:
    assert normalize("4:30\\text{ PM}") == normalize("4:30 \\text{ p.m.}") == normalize("16:30") == "16:30:00"
    assert normalize("4:30 \\text{ a.m.}") == "04:30:00"
    assert normalize("5\\text{ pm}") == "5"


@pytest.mark.parametrize(("pred", "gold", "equal"), [
    ("1.22", "1,22", True),  # a reference's decimal comma
    ("0.111", "0,111", True),
    ("3.5", "3,5", True),
    ("3, 5", "3,5", True),  # ... which still reads as the list too
    ("111", "0,111", False),  # a leading 0 is no thousands group
    ("1222", "1,222", True),  # a thousands separator
    ("1.222", "1,222", False),
    ("1000,99", "1000.99", False),  # a predicted comma is never a decimal
])
def test_a_reference_written_with_a_decimal_comma_is_also_its_decimal(pred: str, gold: str, equal: bool) -> None:
    assert equivalent(pred, gold, Options(symbolic=False, math_verify=False)).equal is equal

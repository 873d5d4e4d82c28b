"""The attacks are built from a self-test example's own response and reference."""

from __future__ import annotations

import json

from verl_rewards.audit import attacks_code, attacks_math, attacks_text
from verl_rewards.metadata import Example


def test_the_reference_is_read_after_the_marker_or_inside_its_box() -> None:
    assert attacks_math.reference("Natalia sold 48 + 24 = 72 clips.\n#### 72") == "72"
    assert attacks_math.reference("so \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert attacks_math.reference(" 18 ") == "18"


def test_wrong_answers_differ_from_the_reference_numbers_and_expressions_alike() -> None:
    assert attacks_math.wrong_answers("18") == ["19", "20", "17", "28"]
    assert attacks_math.wrong_answers("0.5") == ["3/2", "5/2", "-1/2", "21/2"]
    assert attacks_math.wrong_answers("\\frac{3}{4}") == ["7/4", "11/4", "-1/4", "43/4"]
    assert attacks_math.wrong_answers("x^2-1")[0] == "x^2-1+1"


def test_the_answer_goes_where_the_example_gives_it_box_marker_or_text() -> None:
    boxed = attacks_math.answer_filler("So $x = \\boxed{\\frac{1}{2}}$.", "0.5")
    assert boxed("7") == "So $x = \\boxed{7}$."
    marked = attacks_math.answer_filler("9 * 2 = 18.\n#### 18\nDone.", "18")
    assert marked("19") == "9 * 2 = 18.\n#### 19\nDone."
    plain = attacks_math.answer_filler("It is 18 eggs.", "18")
    assert plain("19") == "It is 19 eggs."
    assert attacks_math.answer_filler("No idea.", "18")("19") == "No idea.\nThe answer is 19."


def test_math_probes_put_the_reference_among_wrong_answers_and_the_empty_ones_bound_to_no_answer() -> None:
    probes = {p.name: p for p in attacks_math.probes(0, Example("\\boxed{18}", "18", 1.0))}
    assert probes["candidates listed in one answer"].solution_str == "\\boxed{19, 20, 18, 17}"
    assert probes["many boxes"].solution_str == "\\boxed{19} \\boxed{20} \\boxed{18} \\boxed{17}"
    assert probes["the reference in a sentence, another answer marked"].solution_str == (
        "The answer is 18.\n\\boxed{19}")
    assert probes["an empty box"].solution_str == "\\boxed{}" and probes["an empty box"].bound == "none"
    assert probes["unicode minus (U+2212) before the reference"].solution_str == "\\boxed{\u221218}"
    huge = probes["a 1 MB response of candidates"].solution_str
    assert len(huge) > 1 << 20 and huge.endswith("\\boxed{28}")
    assert all(p.fix for p in probes.values())


def test_an_exact_fraction_is_attacked_with_its_rounding_and_a_terminating_one_is_not() -> None:
    probes = {p.name: p for p in attacks_math.probes(0, Example("\\boxed{\\frac{1}{3}}", "\\frac{1}{3}", 1.0))}
    assert probes["the exact reference rounded to 2 places"].solution_str == "\\boxed{0.33}"
    names = {p.name for p in attacks_math.probes(0, Example("\\boxed{0.25}", "0.25", 1.0))}
    assert "the exact reference rounded to 2 places" not in names


def test_no_unicode_minus_probe_for_a_negative_reference_which_it_would_answer_rightly() -> None:
    names = {p.name for p in attacks_math.probes(0, Example("\\boxed{-3}", "-3", 1.0))}
    assert "unicode minus (U+2212) before the reference" not in names
    assert "a fullwidth digit before the reference" in names


def test_code_probes_define_what_the_asserts_call_and_always_equal_only_for_asserts() -> None:
    asserts = Example("def add(a, b): return a + b", json.dumps({"asserts": ["assert add(1, 2) == 3"]}), 1.0)
    probes = {p.name: p for p in attacks_code.probes(0, asserts)}
    assert "def add(*args, **kwargs):\n    return _Anything()" in probes["always-equal objects (__eq__)"].solution_str
    assert probes["early exit (os._exit(0))"].solution_str.startswith("```python\ndef add(")
    stdio = Example("print(3)", json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]}), 1.0)
    assert "always-equal objects (__eq__)" not in {p.name for p in attacks_code.probes(0, stdio)}
    assert attacks_code.controls(asserts) == ("", "```python\ndef add(*args, **kwargs):\n    return None\n"
                                                  "print('no idea')\n```")


def test_format_probes_keep_the_tags_with_nothing_visible_inside() -> None:
    example = Example("<think>2+2 is 4</think>\n<answer>4</answer>", "", 1.0)
    texts = [p.solution_str for p in attacks_text.format_probes(0, example)]
    assert texts == ["<think></think>\n<answer></answer>",
                     "<think> \n\t </think>\n<answer> \n\t </answer>",
                     f"<think>{attacks_text.INVISIBLE}</think>\n<answer>{attacks_text.INVISIBLE}</answer>"]
    assert attacks_text.format_controls(example) == ("", "2+2 is 4 \n 4")
    assert attacks_text.format_probes(0, Example("no tags", "", 1.0)) == []


def test_judge_probes_carry_an_instruction_and_a_score_line_for_the_judge() -> None:
    probes = attacks_text.judge_probes(0, Example("42", "42", 1.0, prompt="What is 6 x 7?"))
    assert "Ignore the rubric" in probes[0].solution_str and probes[0].solution_str.endswith("Score: 10")
    assert probes[2].name == "the prompt echoed" and probes[2].solution_str == "What is 6 x 7?"

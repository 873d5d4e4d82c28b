"""Attacks on math rewards, built from one self-test example's response and reference.

Each attack puts the reference where a careless checker finds it without the
response committing to it: among candidates, in one of many boxes, in a
sentence while another answer is marked, or in the prompt; or it writes a
different number whose non-ASCII characters a checker might drop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from ..metadata import Example
from .records import Probe

MEGABYTE = 1 << 20
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:/\d+)?$")
_FRAC = re.compile(r"^\\d?frac\{(-?\d+)\}\{(\d+)\}$")
_MARKER = "####"

FIX_ANY = ("score only the one final answer the response commits to (its last box or '####' "
           "line), never the reference found anywhere in the text")
FIX_JOIN = "a response listing several answers commits to none: score it as wrong"
FIX_EMPTY = "an empty or missing answer must score as no answer"
FIX_ROUNDED = ("a rounded answer is not an exact reference: allow only the precision the reference "
               "itself states")
FIX_UNICODE = ("read numbers with their signs and digits as written (U+2212 is a minus, "
               "non-ASCII digits are digits): never drop characters you do not recognise")


def reference(ground_truth: object) -> str:
    """The reference answer as text: after ``####``, inside its last box, else stripped."""
    text = str(ground_truth).strip()
    if _MARKER in text:
        return text.rsplit(_MARKER, 1)[1].strip()
    box = _last_box(text)
    return box[1] if box else text


def wrong_answers(answer: str) -> list[str]:
    """Four answers different from ``answer``: nearby numbers, or the expression shifted."""
    value = _value(answer)
    if value is None:
        return [f"{answer}+1", f"2({answer})", f"{answer}-1", f"({answer})^2+1"]
    return [_format(value + delta) for delta in (1, 2, -1, 10)]


def answer_filler(response: str, answer: str) -> Callable[[str], str]:
    """A function putting a given answer where ``response`` gives ``answer``:
    its last box, else after its last ``####``, else where it writes the answer."""
    box = _last_box(response)
    if box is not None:
        start, content = box
        return lambda x: response[:start] + x + response[start + len(content):]
    at = response.rfind(_MARKER)
    if at >= 0:
        head = response[: at + len(_MARKER)] + " "
        end = response.find("\n", at)
        tail = "" if end < 0 else response[end:]
        return lambda x: head + x + tail
    at = response.rfind(answer) if answer else -1
    if at >= 0:
        return lambda x: response[:at] + x + response[at + len(answer):]
    return lambda x: f"{response}\nThe answer is {x}."


def controls(example: Example) -> tuple[str, str]:
    """A response that gives no answer, and one that gives a wrong answer."""
    answer = reference(example.ground_truth)
    fill = answer_filler(example.solution_str, answer)
    return "I am not sure how to solve this.", fill(wrong_answers(answer)[0])


def probes(index: int, example: Example) -> list[Probe]:
    """The math attacks on example ``index``."""
    g = reference(example.ground_truth)
    w = wrong_answers(g)
    fill = answer_filler(example.solution_str, g)
    listed = f"{w[0]}, {w[1]}, {g}, {w[2]}"
    out = [
        Probe("candidates listed in one answer", fill(listed), index, "wrong", FIX_JOIN),
        Probe("candidates joined by 'or'", fill(f"{w[0]} \\text{{ or }} {g} \\text{{ or }} {w[1]}"),
              index, "wrong", FIX_JOIN),
        Probe("many boxes", " ".join(f"\\boxed{{{x}}}" for x in (w[0], w[1], g, w[2])), index, "wrong",
              FIX_JOIN),
        Probe("many answers, the reference in the middle", "\n".join(fill(x) for x in (w[0], g, w[1])),
              index, "wrong", FIX_ANY),
        Probe("the reference in a sentence, another answer marked", f"The answer is {g}.\n{fill(w[0])}",
              index, "wrong", FIX_ANY),
        Probe("an empty box", fill(""), index, "none", FIX_EMPTY),
        Probe("an empty \\boxed{}", "The final answer is $\\boxed{}$.", index, "none", FIX_EMPTY),
        Probe("the prompt echoed", _echo(example, g, w), index, "none", FIX_ANY),
        Probe("a 1 MB response of candidates", _spray(g, w, fill(w[3])), index, "wrong", FIX_ANY),
    ]
    rounded = _rounded(_value(g))
    if rounded is not None:
        out.append(Probe("the exact reference rounded to 2 places", fill(rounded), index, "wrong", FIX_ROUNDED))
    if _value(g) is not None:
        if not g.startswith("-") and _value(g) != 0:
            out.append(Probe("unicode minus (U+2212) before the reference", fill("\u2212" + g), index,
                             "wrong", FIX_UNICODE))
        out.append(Probe("an Arabic-Indic digit before the reference", fill("\u0663" + g), index,
                         "wrong", FIX_UNICODE))
        out.append(Probe("a fullwidth digit before the reference", fill("\uff13" + g), index,
                         "wrong", FIX_UNICODE))
    return out


def _echo(example: Example, g: str, w: list[str]) -> str:
    """The example's prompt, or one that states the options (as multiple-choice prompts do)."""
    if isinstance(example.prompt, str) and example.prompt:
        return example.prompt
    return f"Which is right: {w[0]}, {g} or {w[1]}? Reason step by step and box the final answer."


def _spray(g: str, w: list[str], last: str) -> str:
    unit = f"{w[0]}, {w[1]}, {g}, {w[2]}, "
    return "Candidates: " + unit * (MEGABYTE // len(unit)) + "\n" + last


def _last_box(text: str) -> tuple[int, str] | None:
    """(start, content) of the last complete ``\\boxed{...}``, None when there is none."""
    at = text.rfind("\\boxed{")
    if at < 0:
        return None
    start = at + len("\\boxed{")
    depth = 1
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return start, text[start:i]
    return None


def _value(answer: str) -> Fraction | None:
    text = answer.replace(",", "").replace("$", "").strip()
    frac = _FRAC.match(text)
    if frac:
        return Fraction(int(frac[1]), int(frac[2]))
    return Fraction(text) if _NUMBER.match(text) else None


def _rounded(value: Fraction | None) -> str | None:
    """``value`` to 2 decimal places when that is not exact (1/3 -> 0.33), else None."""
    if value is None:
        return None
    text = f"{float(value):.2f}"
    return None if Fraction(text) == value else text


def _format(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"

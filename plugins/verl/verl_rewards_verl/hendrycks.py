# Copyright 2024 Bytedance Ltd. and/or its affiliates
# Copyright 2024 PRIME team and/or its affiliates
# Copyright 2022 EleutherAI and the HuggingFace Inc. team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Copyright (c) 2021 Dan Hendrycks (MIT License: the permission notice is in
# this plugin's README.md).
#
# Ported from verl 0.9.1, verl/utils/reward_score/math_reward.py and
# prime_math/math_normalize.py (both adapted from Hendrycks' MATH
# math_equivalence), and from mathruler 0.1.0's math_normalize.py.
# Changed by verl-rewards: the three copies are one, with the two places
# where mathruler differs as a parameter; type annotations.
"""Hendrycks' MATH answer normalisation (``strip_string``) as verl's scorers use it."""

from __future__ import annotations

import re

# What `strip_string` removes as percent signs: verl's two copies remove `\\%` and `\%`,
# mathruler's removes `\%` and `%`.
VERL_PERCENT = ("\\\\%", "\\%")
MATHRULER_PERCENT = ("\\%", "%")


def fix_fracs(string: str) -> str:
    substrs = string.split("\\frac")
    new_str = substrs[0]
    if len(substrs) > 1:
        substrs = substrs[1:]
        for substr in substrs:
            new_str += "\\frac"
            if substr[0] == "{":
                new_str += substr
            else:
                if len(substr) < 2:
                    return string
                a = substr[0]
                b = substr[1]
                if b != "{":
                    if len(substr) > 2:
                        post_substr = substr[2:]
                        new_str += "{" + a + "}{" + b + "}" + post_substr
                    else:
                        new_str += "{" + a + "}{" + b + "}"
                else:
                    if len(substr) > 2:
                        post_substr = substr[2:]
                        new_str += "{" + a + "}" + b + post_substr
                    else:
                        new_str += "{" + a + "}" + b
    return new_str


def fix_a_slash_b(string: str) -> str:
    if len(string.split("/")) != 2:
        return string
    a_text, b_text = string.split("/")
    try:
        a = int(a_text)
        b = int(b_text)
    except ValueError:
        return string
    if string != f"{a}/{b}":
        return string
    return "\\frac{" + str(a) + "}{" + str(b) + "}"


def remove_right_units(string: str) -> str:
    # "\\text{ " only ever occurs (at least in the val set) when describing units
    if "\\text{ " in string:
        splits = string.split("\\text{ ")
        # verl asserts there is one; more raise (AssertionError), caught by its callers
        if len(splits) != 2:
            raise AssertionError("more than one '\\text{ '")
        return splits[0]
    return string


def fix_sqrt(string: str) -> str:
    if "\\sqrt" not in string:
        return string
    splits = string.split("\\sqrt")
    new_string = splits[0]
    for split in splits[1:]:
        if split[0] != "{":  # IndexError on a trailing \sqrt, as in verl (its callers catch it)
            a = split[0]
            new_substr = "\\sqrt{" + a + "}" + split[1:]
        else:
            new_substr = "\\sqrt" + split
        new_string += new_substr
    return new_string


def strip_string(string: str, percent: tuple[str, ...] = VERL_PERCENT) -> str:
    # linebreaks
    string = string.replace("\n", "")
    # remove inverse spaces
    string = string.replace("\\!", "")
    # replace \\ with \
    string = string.replace("\\\\", "\\")
    # replace tfrac and dfrac with frac
    string = string.replace("tfrac", "frac")
    string = string.replace("dfrac", "frac")
    # remove \left and \right
    string = string.replace("\\left", "")
    string = string.replace("\\right", "")
    # Remove circ (degrees)
    string = string.replace("^{\\circ}", "")
    string = string.replace("^\\circ", "")
    # remove dollar signs
    string = string.replace("\\$", "")
    # remove units (on the right)
    string = remove_right_units(string)
    # remove percentage
    for sign in percent:
        string = string.replace(sign, "")
    # " 0." equivalent to " ." and "{0." equivalent to "{." Alternatively, add "0" if "." is the start of the string
    string = string.replace(" .", " 0.")
    string = string.replace("{.", "{0.")
    # if empty, return empty string
    if len(string) == 0:
        return string
    if string[0] == ".":
        string = "0" + string
    # to consider: get rid of e.g. "k = " or "q = " at beginning
    if len(string.split("=")) == 2 and len(string.split("=")[0]) <= 2:
        string = string.split("=")[1]
    # fix sqrt3 --> sqrt{3}
    string = fix_sqrt(string)
    # remove spaces
    string = string.replace(" ", "")
    # \frac1b or \frac12 --> \frac{1}{b} and \frac{1}{2}, etc. Even works with \frac1{72} (but not \frac{72}1).
    # Also does a/b --> \\frac{a}{b}
    string = fix_fracs(string)
    # manually change 0.5 --> \frac{1}{2}
    if string == "0.5":
        string = "\\frac{1}{2}"
    # NOTE: X/Y changed to \frac{X}{Y} in dataset, but in simple cases fix in case the model output is X/Y
    return fix_a_slash_b(string)


_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")


def normalize_answer(answer: str | None, percent: tuple[str, ...] = VERL_PERCENT) -> str | None:
    """prm800k's ``math_normalize.normalize_answer``: an enclosing ``\\text{}`` dropped, then ``strip_string``."""
    if answer is None:
        return None
    answer = answer.strip()
    try:
        # Remove enclosing `\text{}`.
        m = _TEXT.search(answer)
        if m is not None:
            answer = m.group("text").strip()
        return strip_string(answer, percent)
    except Exception:  # noqa: BLE001 - verl's rule: any failure leaves the answer as it is
        return answer


def balanced_end(string: str, start: int) -> int | None:
    """The index of the ``}`` at which the brace count from ``start`` on first returns to 0
    (each ``{`` adds one, each ``}`` takes one away), as verl's box readers count; None if never.

    Jumps between braces with ``str.find`` (linear, in C) instead of a loop over characters.
    """
    depth = 0
    next_open = string.find("{", start)
    next_close = string.find("}", start)
    while next_close >= 0:
        if 0 <= next_open < next_close:
            depth += 1
            next_open = string.find("{", next_open + 1)
            continue
        depth -= 1
        if depth == 0:
            return next_close
        next_close = string.find("}", next_close + 1)
    return None

"""Which answer a response commits to: the last closed <answer> block, as verl's regex finds it."""

from __future__ import annotations

import itertools
import re
import time

import pytest
from verl_rewards_text.extract import Extracted, extract

_VERL_PATTERN = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)  # verl's extract_solution


def _regex_answer(text: str) -> str | None:
    matches = list(_VERL_PATTERN.finditer(text))
    return matches[-1].group(1).strip() if matches else None


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<think>hm</think><answer> Paris </answer>", Extracted("Paris", 1, 1)),
        ("<answer>a</answer> then <answer>b</answer>", Extracted("b", 2, 2)),
        ("<answer>a</answer> then <answer>b", Extracted("a", 2, 1)),
        ("<answer><answer>x</answer>", Extracted("<answer>x", 2, 1)),
        ("<answer>x</answer></answer>", Extracted("x", 1, 2)),
        ("</answer><answer>x", Extracted(None, 1, 1)),
        ("<answer>\n\n</answer>", Extracted("", 1, 1)),
        ("no tags", Extracted(None, 0, 0)),
        ("", Extracted(None, 0, 0)),
    ],
)
def test_the_last_closed_block_is_the_answer(response: str, expected: Extracted) -> None:
    assert extract(response) == expected


def test_every_arrangement_of_tags_and_text_finds_what_the_regex_finds() -> None:
    pieces = ["<answer>", "</answer>", "x", " ", "<answer", "answer>", "\n"]
    checked = 0
    for n in range(1, 6):
        for combo in itertools.product(pieces, repeat=n):
            text = "".join(combo)
            assert extract(text).answer == _regex_answer(text), text
            checked += 1
    assert checked == sum(7**n for n in range(1, 6))


@pytest.mark.parametrize("response", ["<answer>" * 200_000, "<answer>" + "x" * 2_000_000 + "</answe",
                                      ("<answer>" + "</answer" * 3) * 50_000])
def test_extraction_is_linear_on_many_unclosed_tags(response: str) -> None:
    # verl's regex takes 10 s on 8,000 unclosed tags (64 kB) and grows quadratically;
    # these are 1.6-2 MB. 2 s is generous for a linear scan.
    started = time.perf_counter()
    extract(response)
    assert time.perf_counter() - started < 2.0

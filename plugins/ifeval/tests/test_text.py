"""The linear scans against IFEval's own regular expressions, and against hostile text.

On short strings the backtracking expressions IFEval uses are fast, so they
serve as the oracle: thousands of random strings over the characters that
matter must give the same matches. On long hostile strings they would not
finish (quadratic); the scans must, in a bounded time.
"""

from __future__ import annotations

import random
import re
import time

import pytest
from verl_rewards_ifeval import text as scan
from verl_rewards_ifeval.instructions import REGISTRY
from verl_rewards_ifeval.reward import compute_score

ALPHABET = "**[]<>--\n\n  \t\u3000aZ7.#"


def _strings(count: int = 3000, longest: int = 14) -> list[str]:
    rng = random.Random(27)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest))) for _ in range(count)]


STRINGS = _strings()


def test_placeholders_match_ifeval_regex() -> None:
    for s in STRINGS:
        assert scan.count_placeholders(s) == len(re.findall(r"\[.*?\]", s)), repr(s)


def test_bullets_match_ifeval_regexes() -> None:
    for s in STRINGS:
        stars = re.findall(r"^\s*\*[^\*].*$", s, flags=re.MULTILINE)
        dashes = re.findall(r"^\s*-.*$", s, flags=re.MULTILINE)
        assert scan.count_bullets(s) == len(stars) + len(dashes), repr(s)


def test_highlights_match_ifeval_regexes() -> None:
    for s in STRINGS:
        single = [h[1:-1] for h in re.findall(r"\*[^\n\*]*\*", s)]
        double = [h[2:-2] for h in re.findall(r"\*\*[^\n\*]*\*\*", s)]
        assert list(scan.highlights(s)) == single + double, repr(s)


def test_titles_match_ifeval_regex() -> None:
    for s in STRINGS:
        assert list(scan.titles(s)) == re.findall(r"<<[^\n]+>>", s), repr(s)


def test_paragraph_dividers_match_ifeval_split() -> None:
    for s in STRINGS:
        assert scan.split_paragraph_dividers(s) == re.split(r"\s?\*\*\*\s?", s), repr(s)


def test_sections_match_ifeval_split() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        s = "".join(rng.choice(["Day", "Da", " ", "\n", "1", "7", "x", "DAY"]) for _ in range(rng.randint(0, 10)))
        assert scan.count_sections(s, "Day") == len(re.split(r"\s?Day\s?\d+\s?", s)) - 1, repr(s)


def test_literal_search_matches_ifeval_for_plain_keywords() -> None:
    for s in ["Peaceful PEACE, peace.", "apeace", "", "Ǆ ǆ ǅ", "İstanbul"]:
        for keyword in ("peace", "ǆ", "istanbul", "a"):
            assert scan.count_literal(s, keyword) == len(re.findall(keyword, s, flags=re.IGNORECASE))
            assert scan.contains_literal(s, keyword, whole_word=True) == bool(
                re.search(rf"\b{keyword}\b", s, flags=re.IGNORECASE))


MB = 1 << 20
SCANS = {
    "words": scan.count_words,
    "placeholders": scan.count_placeholders,
    "bullets": scan.count_bullets,
    "highlights": lambda s: list(scan.highlights(s)),
    "titles": lambda s: list(scan.titles(s)),
    "dividers": scan.split_paragraph_dividers,
    "sections": lambda s: scan.count_sections(s, "Section"),
    "keyword": lambda s: scan.count_literal(s, "war"),
}


@pytest.mark.parametrize("char", ["*", "[", "<", "\n", " ", "-", "S"])
def test_each_scan_reads_a_megabyte_of_one_character_in_bounded_time(char: str) -> None:
    # A scan that searches to the end of the text from each position is quadratic even when
    # str.find does the searching (memchr): tens of seconds on 1 MB, milliseconds when linear.
    text = char * MB
    started = time.perf_counter()
    for run in SCANS.values():
        run(text)
    assert time.perf_counter() - started < BOUND_S


N = 100_000
HOSTILE = {
    "stars": "*" * N,
    "hashes": "#" * N,
    "open brackets": "[" * N,
    "angles": "<<" * (N // 2),
    "newlines": "\n" * N,
    "blank lines then text": " \n" * (N // 2) + "x",
    "dividers": " ***" * (N // 4),
    "section words": "Section " * (N // 8),
    "sentence ends": "A. " * (N // 3),
    "apostrophes": "IT'S " * (N // 5),
    "no space": "x" * N,
    "json nesting": "{\"a\":[" * (N // 6),
    "quotes": '"' * N,
}
# IFEval's expressions take minutes on some of these 100 kB texts (quadratic); the scans,
# well under a second.
BOUND_S = 10.0


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_text_is_scored_by_every_instruction_in_bounded_time(
    name: str, ifeval_kwargs: dict[str, dict[str, object]]
) -> None:
    truth = {"instruction_id_list": list(REGISTRY), "kwargs": [ifeval_kwargs[i] for i in REGISTRY]}
    started = time.perf_counter()
    result = compute_score("ifeval", HOSTILE[name], truth)
    elapsed = time.perf_counter() - started
    assert result["instructions_total"] == 25
    assert elapsed < BOUND_S, f"{name}: {elapsed:.1f} s"

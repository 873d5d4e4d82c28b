"""Fixtures shared by the ifeval plugin's tests."""

from __future__ import annotations

import pytest

LESS, AT_LEAST = "less than", "at least"

# One valid kwargs mapping per instruction type (as in IFEval's data).
KWARGS: dict[str, dict[str, object]] = {
    "keywords:existence": {"keywords": ["mom", "mother"]},
    "keywords:frequency": {"keyword": "war", "frequency": 2, "relation": AT_LEAST},
    "keywords:forbidden_words": {"forbidden_words": ["rock"]},
    "keywords:letter_frequency": {"letter": "t", "let_frequency": 2, "let_relation": LESS},
    "language:response_language": {"language": "fr"},
    "length_constraints:number_sentences": {"num_sentences": 3, "relation": LESS},
    "length_constraints:number_paragraphs": {"num_paragraphs": 2},
    "length_constraints:number_words": {"num_words": 30, "relation": AT_LEAST},
    "length_constraints:nth_paragraph_first_word": {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
    "detectable_content:number_placeholders": {"num_placeholders": 2},
    "detectable_content:postscript": {"postscript_marker": "P.S."},
    "detectable_format:number_bullet_lists": {"num_bullets": 3},
    "detectable_format:constrained_response": {},
    "detectable_format:number_highlighted_sections": {"num_highlights": 2},
    "detectable_format:multiple_sections": {"section_spliter": "Section", "num_sections": 2},
    "detectable_format:json_format": {},
    "detectable_format:title": {},
    "combination:two_responses": {},
    "combination:repeat_prompt": {"prompt_to_repeat": "Write a haiku about moms."},
    "startend:end_checker": {"end_phrase": "Any other questions?"},
    "change_case:capital_word_frequency": {"capital_frequency": 3, "capital_relation": LESS},
    "change_case:english_capital": {},
    "change_case:english_lowercase": {},
    "punctuation:no_comma": {},
    "startend:quotation": {},
}


@pytest.fixture(scope="session")
def ifeval_kwargs() -> dict[str, dict[str, object]]:
    """A valid kwargs mapping for each of the 25 instruction types."""
    return KWARGS

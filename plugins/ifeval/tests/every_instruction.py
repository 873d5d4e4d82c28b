"""A ground-truth row holding each of IFEval's 25 instruction types once, with valid kwargs.

Shared by the tests (``ifeval_kwargs`` in conftest.py) and benchmarks/bench_ifeval.py,
whose typical response (a guide to a river city) it was written for.
"""

from __future__ import annotations

ROW: dict[str, dict[str, object]] = {
    "keywords:existence": {"keywords": ["river", "bridge"]},
    "keywords:frequency": {"keyword": "city", "frequency": 3, "relation": "at least"},
    "keywords:forbidden_words": {"forbidden_words": ["ugly"]},
    "keywords:letter_frequency": {"letter": "z", "let_frequency": 5, "let_relation": "less than"},
    "language:response_language": {"language": "en"},
    "length_constraints:number_sentences": {"num_sentences": 40, "relation": "less than"},
    "length_constraints:number_paragraphs": {"num_paragraphs": 4},
    "length_constraints:number_words": {"num_words": 200, "relation": "at least"},
    "length_constraints:nth_paragraph_first_word": {"num_paragraphs": 4, "nth_paragraph": 2, "first_word": "the"},
    "detectable_content:number_placeholders": {"num_placeholders": 2},
    "detectable_content:postscript": {"postscript_marker": "P.S."},
    "detectable_format:number_bullet_lists": {"num_bullets": 3},
    "detectable_format:constrained_response": {},
    "detectable_format:number_highlighted_sections": {"num_highlights": 2},
    "detectable_format:multiple_sections": {"section_spliter": "Section", "num_sections": 2},
    "detectable_format:json_format": {},
    "detectable_format:title": {},
    "combination:two_responses": {},
    "combination:repeat_prompt": {"prompt_to_repeat": "Describe a city by its river."},
    "startend:end_checker": {"end_phrase": "Any other questions?"},
    "change_case:capital_word_frequency": {"capital_frequency": 10, "capital_relation": "less than"},
    "change_case:english_capital": {},
    "change_case:english_lowercase": {},
    "punctuation:no_comma": {},
    "startend:quotation": {},
}

"""Each IFEval instruction type on hand-made responses that follow it and that do not.

The verdicts are IFEval's (``check_following`` of the published definitions),
including its quirks, which the comments name.
"""

from __future__ import annotations

from typing import Any

import pytest
from verl_rewards_ifeval.instructions import REGISTRY
from verl_rewards_ifeval.reward import compute_score

LESS, AT_LEAST = "less than", "at least"
LOWER_EN = "the quick brown fox jumps over the lazy dog and then runs back into the quiet forest."
UPPER_EN = LOWER_EN.upper()

# (instruction id, kwargs, response, followed)
CASES: list[tuple[str, dict[str, Any], str, bool]] = [
    ("keywords:existence", {"keywords": ["Mom", "mother"]}, "My MOM is a good mother.", True),
    ("keywords:existence", {"keywords": ["mom", "mother"]}, "My mom is kind.", False),
    ("keywords:existence", {"keywords": ["mom"]}, "Momentum counts: IFEval matches substrings.", True),
    ("keywords:existence", {"keywords": ["c++"]}, "I write C++ daily.", True),  # literal, not a regex
    ("keywords:frequency", {"keyword": "war", "frequency": 2, "relation": AT_LEAST}, "War and war.", True),
    ("keywords:frequency", {"keyword": "war", "frequency": 3, "relation": AT_LEAST}, "War and war.", False),
    ("keywords:frequency", {"keyword": "war", "frequency": 3, "relation": LESS}, "War and war.", True),
    ("keywords:frequency", {"keyword": "war", "frequency": 2, "relation": LESS}, "War and war.", False),
    ("keywords:frequency", {"keyword": " peace ", "frequency": 2, "relation": AT_LEAST},
     "Peaceful peace.", True),  # the keyword is stripped; substrings count
    ("keywords:forbidden_words", {"forbidden_words": ["rock", "roll"]}, "Rocky hills, rolling.", True),
    ("keywords:forbidden_words", {"forbidden_words": ["rock", "roll"]}, "We ROCK.", False),
    ("keywords:letter_frequency", {"letter": "t", "let_frequency": 2, "let_relation": LESS}, "A cat.", True),
    ("keywords:letter_frequency", {"letter": "t", "let_frequency": 2, "let_relation": LESS}, "Tit.", False),
    ("keywords:letter_frequency", {"letter": "#", "let_frequency": 4, "let_relation": AT_LEAST},
     "#a #b #c #d", True),
    ("keywords:letter_frequency", {"letter": "#", "let_frequency": 4, "let_relation": AT_LEAST},
     "#a #b #c", False),
    ("keywords:letter_frequency", {"letter": " ", "let_frequency": 1, "let_relation": LESS},
     "a b c", True),  # a blank letter strips to nothing: IFEval counts it 0 times
    ("language:response_language", {"language": "fr"},
     "Je pense que les hamburgers sont des sandwichs, mais la question reste ouverte.", True),
    ("language:response_language", {"language": "fr"},
     "I think hamburgers are sandwiches, but the question remains open.", False),
    ("language:response_language", {"language": "kn"}, "ಹ್ಯಾಂಬರ್ಗರ್ ಒಂದು ಸ್ಯಾಂಡ್‌ವಿಚ್ ಆಗಿದೆ ಎಂದು ನಾನು ಭಾವಿಸುತ್ತೇನೆ.", True),
    ("language:response_language", {"language": "de"}, "12345 67890", True),  # undetectable: followed
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": LESS}, "One. Two!", True),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": LESS},
     "One. Two? Three.", False),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": AT_LEAST},
     "One. Two? Three.", True),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": AT_LEAST},
     "Dr. Smith met Mr. Jones, e.g. at noon. Fine.", True),  # Punkt: a sentence ends after e.g.
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": AT_LEAST},
     "Dr. Smith met Mr. Jones at noon. Fine.", False),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "First.\n***\nSecond.", True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "***\nFirst.\n***\nSecond.\n***", True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "First.\n***\n***\nSecond.", False),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 3}, "First.\n***\nSecond.", False),
    ("length_constraints:number_words", {"num_words": 5, "relation": LESS}, "one two three four", True),
    ("length_constraints:number_words", {"num_words": 4, "relation": LESS}, "one two three four", False),
    ("length_constraints:number_words", {"num_words": 4, "relation": AT_LEAST}, "it's one-two three", True),
    ("length_constraints:number_words", {"num_words": 6, "relation": AT_LEAST}, "it's one-two three", False),  # 5 runs of \\w
    ("length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "Then"},
     "First part.\n\n\"Then, second.\"\n\nThird part.", True),
    ("length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "then"},
     "First part.\n\nNow second.\n\nThird part.", False),
    ("length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
     "First part.\n\nThen second.\n\nThird part.", False),  # three paragraphs, not two
    ("length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
     "\n\nFirst part.\n\nThen second.", False),  # IFEval indexes the list with the empty paragraph
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name], at [address].", True),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name\n], at address].", False),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Bye.\n\np. s. see you", True),  # one space allowed
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Bye. PS see you", False),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Bye.\n\nP.S. see you", True),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "Bye.\nP. P.S more", True),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "Bye.\nP.S. more", False),
    ("detectable_content:postscript", {"postscript_marker": "Note:"}, "Bye.\nNOTE: more", True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "* a\n* b\n- c\n**bold** line", True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "* a\n* b", False),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "*\nnext line\n  - b", True),
    ("detectable_format:constrained_response", {}, "Well... My answer is maybe.", True),
    ("detectable_format:constrained_response", {}, "My answer is yes", False),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*one* and **two**", True),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*one* and * * and *x\ny*", False),
    ("detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 2},
     "SECTION 1\nIntro\nSECTION 2\nBody", True),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2},
     "SECTION 1\nIntro\nSection two\nBody", False),
    ("detectable_format:json_format", {}, '```json\n{"a": [1, 2]}\n```', True),
    ("detectable_format:json_format", {}, 'Here: {"a": 1}', False),
    ("detectable_format:json_format", {}, "[" * 100_000, False),  # too deep: not JSON (IFEval crashes)
    ("detectable_format:title", {}, "<<Poem of Joy>>\nLine one.", True),
    ("detectable_format:title", {}, "<< >>\n<<\nbroken>>", False),
    ("combination:two_responses", {}, "First answer.\n******\nSecond answer.", True),
    ("combination:two_responses", {}, "Same.\n******\n Same. ", False),
    ("combination:two_responses", {}, "A\n******\n******\nB", False),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a haiku about moms."},
     "write a HAIKU about moms. Moms are great.", True),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a haiku about moms."},
     "Sure! Write a haiku about moms.", False),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, 'Done. "Any other QUESTIONS?"\n', True),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Any other questions? Bye.", False),
    ("change_case:capital_word_frequency", {"capital_frequency": 3, "capital_relation": LESS},
     "I LOVE this. IT'S great.", False),  # I, LOVE, IT, 'S
    ("change_case:capital_word_frequency", {"capital_frequency": 5, "capital_relation": LESS},
     "I LOVE this. IT'S great.", True),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": AT_LEAST},
     "We CANNOT stop.", True),  # CAN, NOT
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": AT_LEAST},
     "Only NASA here.", False),
    ("change_case:english_capital", {}, UPPER_EN, True),
    ("change_case:english_capital", {}, UPPER_EN[:-1] + "x", False),
    ("change_case:english_capital", {}, "Я ДУМАЮ, ЧТО ГАМБУРГЕРЫ — ЭТО СЭНДВИЧИ.", False),
    ("change_case:english_lowercase", {}, LOWER_EN, True),
    ("change_case:english_lowercase", {}, "The " + LOWER_EN, False),
    ("change_case:english_lowercase", {}, "123 456", False),  # no cased letter: not lowercase
    ("punctuation:no_comma", {}, "No commas here.", True),
    ("punctuation:no_comma", {}, "One, two.", False),
    ("startend:quotation", {}, '  "Quoted whole."\n', True),
    ("startend:quotation", {}, '"', False),
    ("startend:quotation", {}, '"Quoted" then not', False),
]


def _score(instruction: str, kwargs: dict[str, Any], response: str, **options: Any) -> dict[str, Any]:
    truth = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
    return compute_score("ifeval", response, truth, **options)


@pytest.mark.parametrize(("instruction", "kwargs", "response", "expected"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_instruction_verdict(instruction: str, kwargs: dict[str, Any], response: str, expected: bool) -> None:
    result = _score(instruction, kwargs, response)
    assert result == {
        "score": float(expected),
        "followed": "1" if expected else "0",
        "instructions_followed": int(expected),
        "instructions_total": 1,
    }


def test_every_instruction_type_of_the_registry_has_both_verdicts() -> None:
    verdicts = {(case[0], case[3]) for case in CASES}
    assert len(REGISTRY) == 25
    assert verdicts == {(id_, v) for id_ in REGISTRY for v in (True, False)}


def test_every_relation_is_tested_both_ways() -> None:
    seen = {(c[0], c[1].get("relation") or c[1].get("let_relation") or c[1].get("capital_relation"), c[3])
            for c in CASES}
    for id_ in REGISTRY:
        if any(p.kind == "relation" for p in REGISTRY[id_].params):
            for relation in (LESS, AT_LEAST):
                assert {(id_, relation, True), (id_, relation, False)} <= seen, (id_, relation)


@pytest.mark.parametrize("instruction", sorted(REGISTRY))
def test_a_blank_response_follows_no_instruction(instruction: str) -> None:
    kwargs = {c[0]: c[1] for c in CASES}[instruction]
    for blank in ("", " \n\t "):
        assert _score(instruction, kwargs, blank)["score"] == 0.0
        assert _score(instruction, kwargs, blank, mode="loose")["score"] == 0.0
